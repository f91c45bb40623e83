import { DatabaseServiceConfig } from '@app/config';

export class DirectoryConfig extends DatabaseServiceConfig {}
