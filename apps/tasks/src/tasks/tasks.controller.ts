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
  type TaskView,
  type TransitionReply,
} from '@app/contracts';
import { TasksService } from './tasks.service';

@Controller()
export class TasksController {
  constructor(@Inject(TasksService) private readonly tasks: TasksService) {}

  @MessagePattern(TASKS_SUBJECTS.send)
  send(@Payload() request: SendRequest): Promise<SendReply> {
    return this.tasks.send(request);
  }

  @MessagePattern(TASKS_SUBJECTS.get)
  get(@Payload() request: GetRequest): Promise<TaskView> {
    return this.tasks.get(request);
  }

  @MessagePattern(TASKS_SUBJECTS.list)
  list(@Payload() request: ListRequest): Promise<ListReply> {
    return this.tasks.list(request);
  }

  @MessagePattern(TASKS_SUBJECTS.events)
  events(@Payload() request: TaskEventsRequest): Promise<TaskEventsReply> {
    return this.tasks.events(request);
  }

  @MessagePattern(TASKS_SUBJECTS.inbox_events)
  inboxEvents(@Payload() request: InboxEventsRequest): Promise<InboxEventsReply> {
    return this.tasks.inboxEvents(request);
  }

  @MessagePattern(TASKS_SUBJECTS.transition)
  transition(@Payload() request: TransitionRequest): Promise<TransitionReply> {
    return this.tasks.transition(request);
  }
}
