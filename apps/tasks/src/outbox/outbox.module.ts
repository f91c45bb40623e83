import { Module, type DynamicModule } from '@nestjs/common';
import { DEFAULT_OUTBOX_RELAY_OPTIONS, OUTBOX_RELAY_OPTIONS, type OutboxRelayOptions } from './outbox.constants';
import { OutboxRelayService } from './outbox-relay.service';

/** Relays the tasks service's outbox to JetStream. */
@Module({})
export class OutboxModule {
  static forRoot(options: Pick<OutboxRelayOptions, 'natsUrl' | 'subjectPrefix' | 'publicUrl' | 'databaseUrl'> & Partial<OutboxRelayOptions>): DynamicModule {
    return {
      module: OutboxModule,
      providers: [{ provide: OUTBOX_RELAY_OPTIONS, useValue: { ...DEFAULT_OUTBOX_RELAY_OPTIONS, ...options } }, OutboxRelayService],
      exports: [OutboxRelayService],
    };
  }
}
