import { type DynamicModule, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SERVICE_QUEUE_GROUPS, type RelayService } from '@app/contracts';
import type { DatabaseServiceConfig } from '@app/config';
import { createRootLogger, PinoNestLogger, type LoggingOptions } from '@app/logging';
import { NatsHandlerMetrics } from '@app/metrics';
import { startTracing } from '@app/tracing';
import { RelayNatsServer } from './relay-nats.server';
import { RelayRpcExceptionFilter } from './rpc-exception.filter';
import { RpcValidationPipe } from './rpc-validation.pipe';
import { RequestIdInterceptor } from './request-id.interceptor';

/**
 * Starts one relay service as a NATS microservice: subscribed in its queue group under the
 * configured subject prefix, payloads validated, errors mapped, shutdown draining NATS.
 */
export async function startRelayMicroservice(
  service: RelayService,
  module: DynamicModule,
  config: DatabaseServiceConfig,
  options: LoggingOptions = {},
): Promise<INestMicroservice> {
  const logger = new PinoNestLogger(createRootLogger(service, config.LOG_LEVEL, options.logDestination));
  const tracer = startTracing(service, config);
  const app = await NestFactory.createMicroservice(module, {
    strategy: new RelayNatsServer(
      config.NATS_SUBJECT_PREFIX,
      {
        servers: config.NATS_URL,
        queue: SERVICE_QUEUE_GROUPS[service],
        name: `agentrelay-${service}`,
        maxReconnectAttempts: -1,
        noAsyncTraces: true,
      },
      undefined,
      config.RELAY_MAX_IN_FLIGHT,
    ),
    logger,
    bufferLogs: true,
  });
  app.useGlobalPipes(new RpcValidationPipe());
  app.useGlobalFilters(new RelayRpcExceptionFilter(service));
  app.useGlobalInterceptors(new RequestIdInterceptor(logger.forContext('Rpc'), app.get(NatsHandlerMetrics), tracer));
  if (tracer) flushTracesOnClose(app, () => tracer.shutdown());
  app.enableShutdownHooks();
  await app.listen();
  logger.log(`${service} service listening on NATS ${config.NATS_URL} (queue group ${SERVICE_QUEUE_GROUPS[service]})`, 'Bootstrap');
  return app;
}

/** Exports the buffered spans once the app has closed (after its handlers finished). */
function flushTracesOnClose(app: INestMicroservice, flush: () => Promise<void>): void {
  const close = app.close.bind(app);
  app.close = async () => {
    await close();
    await flush();
  };
}
