import { DatabaseServiceConfig } from '@app/config';

export class TasksConfig extends DatabaseServiceConfig {}
