import type { INestMicroservice } from '@nestjs/common';
import type { LoggingOptions } from '@app/logging';
import { startRelayMicroservice } from '@app/messaging';
import { DirectoryConfig } from './directory.config';
import { DirectoryModule } from './directory.module';

export function startDirectoryService(config: DirectoryConfig, options: LoggingOptions = {}): Promise<INestMicroservice> {
  return startRelayMicroservice('directory', DirectoryModule.forRoot(config), config, options);
}
