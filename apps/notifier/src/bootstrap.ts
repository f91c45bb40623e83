import type { INestMicroservice } from '@nestjs/common';
import type { LoggingOptions } from '@app/logging';
import { startRelayMicroservice } from '@app/messaging';
import { NotifierConfig } from './notifier.config';
import { NotifierModule } from './notifier.module';

export function startNotifierService(config: NotifierConfig, options: LoggingOptions = {}): Promise<INestMicroservice> {
  return startRelayMicroservice('notifier', NotifierModule.forRoot(config), config, options);
}
