import { type DynamicModule, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SERVICE_QUEUE_GROUPS, type RelayService } from '@app/contracts';
import type { DatabaseServiceConfig } from '@app/config';
import { DEPLOYMENT_ID, deploymentIdProvider } from '@app/database';
import { createRootLogger, PinoNestLogger, type LoggingOptions } from '@app/logging';
import { MetricsServer, NatsHandlerMetrics } from '@app/metrics';
import { startTracing } from '@app/tracing';
import { prepareEventStream } from './jetstream';
import { natsConnectOptions } from './nats-connection';
import { checkNatsPermissions } from './nats-permission-check';
import { natsInboxPrefix, relayNatsPermissions } from './nats-permissions';
import { RelayNatsServer } from './relay-nats.server';
import { ServiceLoad } from './service-load';
import { RelayRpcExceptionFilter } from './rpc-exception.filter';
import { ContractGuardPipe } from './contract-guard.pipe';
import { RequestIdInterceptor } from './request-id.interceptor';

/**
 * Starts one relay service as a NATS microservice: subscribed in its queue group under the
 * configured subject prefix, payloads held to their contracts' shape, errors mapped, shutdown draining NATS.
 */
export async function startRelayMicroservice(
  service: RelayService,
  module: DynamicModule,
  config: DatabaseServiceConfig,
  options: LoggingOptions = {},
): Promise<INestMicroservice> {
  const logger = new PinoNestLogger(createRootLogger(service, config.LOG_LEVEL, options.logDestination));
  const inboxPrefix = natsInboxPrefix(service, config.NATS_SUBJECT_PREFIX);
  await checkNatsPermissions(config.natsServers, relayNatsPermissions(service, config.NATS_SUBJECT_PREFIX));
  const tracer = startTracing(service, config);
  const load = new ServiceLoad(config.RELAY_MAX_IN_FLIGHT);
  const app = await NestFactory.createMicroservice(withServiceLoad(module, load, config.RELAY_DEPLOYMENT_ID), {
    strategy: new RelayNatsServer(
      config.NATS_SUBJECT_PREFIX,
      {
        ...natsConnectOptions(config.natsServers, inboxPrefix),
        queue: SERVICE_QUEUE_GROUPS[service],
        name: `agentrelay-${service}`,
        maxReconnectAttempts: -1,
        noAsyncTraces: true,
      },
      undefined,
      load,
    ),
    logger,
    bufferLogs: true,
  });
  // After the module is built (the database migrated, its deployment id read), before it subscribes to anything.
  await prepareEventStream(
    {
      natsUrl: config.natsServers,
      subjectPrefix: config.NATS_SUBJECT_PREFIX,
      inboxPrefix,
      replicas: config.RELAY_JETSTREAM_REPLICAS,
      maxBytes: config.RELAY_EVENT_STREAM_MAX_BYTES,
      name: `agentrelay-${service}-start`,
      deploymentId: app.get<string>(DEPLOYMENT_ID),
    },
    logger,
  ).catch(async (error: unknown) => {
    await app.close().catch(() => undefined);
    await tracer?.shutdown().catch(() => undefined);
    throw error;
  });
  app.useGlobalPipes(new ContractGuardPipe());
  app.useGlobalFilters(new RelayRpcExceptionFilter(service));
  app.useGlobalInterceptors(new RequestIdInterceptor(logger.forContext('Rpc'), app.get(NatsHandlerMetrics), tracer));
  if (tracer) flushTracesOnClose(app, () => tracer.shutdown());
  app.enableShutdownHooks();
  await app.listen();
  logger.log(`${service} service listening on NATS ${config.natsServers.printable} (queue group ${SERVICE_QUEUE_GROUPS[service]})`, 'Bootstrap');
  return app;
}

const LOAD_READINESS_BINDING = Symbol('LOAD_READINESS_BINDING');

/**
 * The service's module, with the process's request load and its database's deployment id available
 * to every provider (the NATS health answer reads both) and the metrics port's `/readyz` failing
 * while the service sheds everything.
 */
function withServiceLoad(module: DynamicModule, load: ServiceLoad, deploymentId: string | undefined): DynamicModule {
  class RelayServiceRoot {}
  return {
    module: RelayServiceRoot,
    global: true,
    imports: [module],
    providers: [
      { provide: ServiceLoad, useValue: load },
      deploymentIdProvider(deploymentId),
      {
        provide: LOAD_READINESS_BINDING,
        inject: [{ token: MetricsServer, optional: true }],
        useFactory: (server: MetricsServer | undefined) => server?.addReadinessCheck('in_flight', () => Promise.resolve(!load.overloaded)),
      },
    ],
    exports: [ServiceLoad, DEPLOYMENT_ID],
  };
}

/** Exports the buffered spans once the app has closed (after its handlers finished). */
function flushTracesOnClose(app: INestMicroservice, flush: () => Promise<void>): void {
  const close = app.close.bind(app);
  app.close = async () => {
    await close();
    await flush();
  };
}
