import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  GetRequest,
  ListRequest,
  SendRequest,
  TASKS_SUBJECTS,
  TaskEventsRequest,
  InboxEventsRequest,
  type InboxEventsReply,
  type TaskEventsReply,
  TransitionRequest,
  type ListReply,
  type SendReply,
  type ThreadView,
  type TransitionReply,
} from '@app/contracts';
import { HandoffsService } from './handoffs.service';

@Controller()
export class HandoffsController {
  constructor(@Inject(HandoffsService) private readonly handoffs: HandoffsService) {}

  @MessagePattern(TASKS_SUBJECTS.send)
  send(@Payload() request: SendRequest): Promise<SendReply> {
    return this.handoffs.send(request);
  }

  @MessagePattern(TASKS_SUBJECTS.get)
  get(@Payload() request: GetRequest): Promise<ThreadView> {
    return this.handoffs.get(request);
  }

  @MessagePattern(TASKS_SUBJECTS.list)
  list(@Payload() request: ListRequest): Promise<ListReply> {
    return this.handoffs.list(request);
  }

  @MessagePattern(TASKS_SUBJECTS.events)
  events(@Payload() request: TaskEventsRequest): Promise<TaskEventsReply> {
    return this.handoffs.events(request);
  }

  @MessagePattern(TASKS_SUBJECTS.inbox_events)
  inboxEvents(@Payload() request: InboxEventsRequest): Promise<InboxEventsReply> {
    return this.handoffs.inboxEvents(request);
  }

  @MessagePattern(TASKS_SUBJECTS.transition)
  transition(@Payload() request: TransitionRequest): Promise<TransitionReply> {
    return this.handoffs.transition(request);
  }
}
