import type { INestMicroservice } from '@nestjs/common';
import { startRelayMicroservice } from '@app/messaging';
import { DirectoryConfig } from './directory.config';
import { DirectoryModule } from './directory.module';

export function startDirectoryService(config: DirectoryConfig): Promise<INestMicroservice> {
  return startRelayMicroservice('directory', DirectoryModule.forRoot(config), config);
}
