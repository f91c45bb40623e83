import { Module } from '@nestjs/common';
import { PushFailureThrottle } from './push-failure-throttle';
import { UpstreamPushController } from './upstream-push.controller';

/** The receiver of upstream agents' push notifications, and its throttle of wrong tokens. */
@Module({ controllers: [UpstreamPushController], providers: [PushFailureThrottle] })
export class UpstreamPushModule {}
