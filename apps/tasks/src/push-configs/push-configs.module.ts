import { Module } from '@nestjs/common';
import { PushConfigsController } from './push-configs.controller';
import { PushConfigsService } from './push-configs.service';

/** A2A push-notification configs of tasks (`relay.tasks.v1.push_configs.*`). */
@Module({ controllers: [PushConfigsController], providers: [PushConfigsService] })
export class PushConfigsModule {}
