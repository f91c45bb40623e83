import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { PAYLOAD_LIMITS, requestBodyLimit } from '@app/contracts';
import { checkNatsPermissions, NatsRpcClient, relayNatsPermissions } from '@app/messaging';
import { createRootLogger, PinoNestLogger, REQUEST_ID_HEADER, runWithRequestId, sanitizeRequestId, type LoggingOptions } from '@app/logging';
import { endHttpServerSpan, startHttpServerSpan, startTracing, type ActiveSpan } from '@app/tracing';
import { EdgeConfig } from './edge.config';
import { EdgeModule } from './edge.module';
import { ReadinessService } from './health/readiness.service';
import { configureInputGuard } from './input/input-guard';
import { bindingOf, configureAgentEndpointHttp } from './endpoint/http-intake';
import { answerKnownRestRefusal } from './rest/rest.endpoint';
import { CallersAtLimit } from './endpoint/callers-at-limit';
import { answerKnownRefusal } from './jsonrpc/json-rpc.endpoint';
import { RequestMetrics } from './metrics/request-metrics';

export const MAX_BODY_BYTES = PAYLOAD_LIMITS.requestBodyBytes;

/** Probes make no trace (a kubelet asks every few seconds). */
const UNTRACED_ROUTES = new Set(['/healthz', '/readyz']);

/** Builds the edge's HTTP app (not yet listening), so tests can drive it in-process. */
export async function createEdgeApp(config: EdgeConfig, options: LoggingOptions = {}): Promise<NestFastifyApplication> {
  const logger = new PinoNestLogger(createRootLogger('edge', config.LOG_LEVEL, options.logDestination));
  const { authorizationRequired } = await checkNatsPermissions(config.natsServers, relayNatsPermissions('edge', config.NATS_SUBJECT_PREFIX));
  if (!authorizationRequired) {
    logger
      .forContext('Bootstrap')
      .warn(
        `NATS at ${config.natsServers.printable} has no authorization: any process that reaches it can act as the relay's services (fine on a developer machine; docs/nats-security.md)`,
      );
  }
  const accessLog = logger.forFixedFields('Http');
  const adapter = new FastifyAdapter({
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { ignoreTrailingSlash: true },
    // The client address (request.ip) is X-Forwarded-For's only when the peer is a trusted proxy.
    trustProxy: config.RELAY_TRUSTED_PROXIES.length > 0 ? config.RELAY_TRUSTED_PROXIES : false,
    genReqId: (request: { headers: Record<string, string | string[] | undefined> }) => sanitizeRequestId(request.headers[REQUEST_ID_HEADER]) ?? randomUUID(),
  });
  const tracer = startTracing('edge', config);
  const app = await NestFactory.create<NestFastifyApplication>(EdgeModule.forRoot(config), adapter, { logger, bufferLogs: true });
  // A JSON-RPC body must fit one NATS message once wrapped for a service: the server's max_payload decides.
  const natsMaxPayload = app.get(NatsRpcClient).maxPayloadBytes;
  const bodyLimit = requestBodyLimit(natsMaxPayload);
  if (bodyLimit < MAX_BODY_BYTES) {
    logger
      .forContext('Bootstrap')
      .warn(
        { nats_max_payload: natsMaxPayload, body_limit: bodyLimit },
        `NATS max_payload is ${natsMaxPayload} bytes: JSON-RPC bodies are limited to ${bodyLimit} bytes instead of ${MAX_BODY_BYTES}`,
      );
  }
  await app
    .get(ReadinessService)
    .assertOneDeployment()
    .catch(async (error: unknown) => {
      await app.close().catch(() => undefined);
      throw error;
    });
  const callersAtLimit = app.get(CallersAtLimit);
  const requestMetrics = app.get(RequestMetrics);
  configureAgentEndpointHttp(app, bodyLimit, (request, reply, body) =>
    bindingOf(request) === 'json-rpc'
      ? answerKnownRefusal(callersAtLimit, requestMetrics, request, reply, body)
      : answerKnownRestRefusal(callersAtLimit, requestMetrics, request, reply, body),
  );
  configureInputGuard(app);
  const fastify = app.getHttpAdapter().getInstance();
  requestMetrics.install(fastify);
  const serverSpans = new WeakMap<object, ActiveSpan>();
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    const route = tracer && request.routeOptions.url;
    if (!tracer || (route && UNTRACED_ROUTES.has(route))) return runWithRequestId(request.id, done);
    const span = startHttpServerSpan(tracer, request.method, route || 'unmatched', request.headers);
    serverSpans.set(request, span);
    span.run(() => runWithRequestId(request.id, done));
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const span = tracer && serverSpans.get(request);
    if (span) endHttpServerSpan(span, reply.statusCode);
    const path = request.url.split('?')[0];
    accessLog.info(
      {
        request_id: request.id,
        ...(span ? { trace_id: span.span.spanContext().traceId } : {}),
        method: request.method,
        path,
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request completed',
    );
    done();
  });
  if (tracer) fastify.addHook('onClose', async () => tracer.shutdown());
  app.enableShutdownHooks();
  return app;
}

export async function startEdge(config: EdgeConfig): Promise<NestFastifyApplication> {
  const app = await createEdgeApp(config);
  await app.listen(config.EDGE_PORT, config.EDGE_HOST);
  new Logger('Bootstrap').log(
    `edge listening on http://${config.EDGE_HOST}:${config.EDGE_PORT} (public URL ${config.RELAY_PUBLIC_URL}, NATS ${config.natsServers.printable})`,
  );
  return app;
}
