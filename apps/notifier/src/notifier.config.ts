import { DatabaseServiceConfig } from '@app/config';

export class NotifierConfig extends DatabaseServiceConfig {}
