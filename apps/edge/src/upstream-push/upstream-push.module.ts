import { Module } from '@nestjs/common';
import { UpstreamPushController } from './upstream-push.controller';

/** The receiver of upstream agents' push notifications. */
@Module({ controllers: [UpstreamPushController] })
export class UpstreamPushModule {}
