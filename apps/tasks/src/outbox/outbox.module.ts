import { Module, type DynamicModule } from '@nestjs/common';
import { DEFAULT_OUTBOX_RELAY_OPTIONS, OUTBOX_RELAY_OPTIONS, type OutboxRelayOptions } from './outbox.constants';
import { OutboxRelayService } from './outbox-relay.service';
import { COMMITTED_EVENTS } from './committed-events';

/**
 * Publishes the tasks service's events to JetStream: after each commit (`COMMITTED_EVENTS`, for
 * every module that writes events), and from the outbox, the safety net.
 */
@Module({})
export class OutboxModule {
  static forRoot(options: Pick<OutboxRelayOptions, 'natsUrl' | 'subjectPrefix' | 'publicUrl' | 'databaseUrl'> & Partial<OutboxRelayOptions>): DynamicModule {
    return {
      module: OutboxModule,
      global: true,
      providers: [
        { provide: OUTBOX_RELAY_OPTIONS, useValue: { ...DEFAULT_OUTBOX_RELAY_OPTIONS, ...options } },
        OutboxRelayService,
        { provide: COMMITTED_EVENTS, useExisting: OutboxRelayService },
      ],
      exports: [OutboxRelayService, COMMITTED_EVENTS],
    };
  }
}
