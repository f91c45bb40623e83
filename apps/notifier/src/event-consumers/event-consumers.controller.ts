import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, NatsContext, Payload } from '@nestjs/microservices';
import { EnsureEventConsumerRequest, EVENT_CONSUMER_SUBJECTS, type EnsureEventConsumerReply } from '@app/contracts';
import { EventConsumersService } from './event-consumers.service';

/** Internal event consumers ask here for their durable consumer, each on a subject of its own name. */
@Controller()
export class EventConsumersController {
  constructor(@Inject(EventConsumersService) private readonly consumers: EventConsumersService) {}

  @MessagePattern(EVENT_CONSUMER_SUBJECTS.ensure)
  ensure(@Payload() request: EnsureEventConsumerRequest, @Ctx() context: NatsContext): Promise<EnsureEventConsumerReply> {
    return this.consumers.ensure(context.getSubject(), request);
  }
}
