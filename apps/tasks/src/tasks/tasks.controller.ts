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
import { ReadTasks } from './use-cases/read-tasks';
import { SendTask } from './use-cases/send-task';
import { TransitionTask } from './use-cases/transition-task';

@Controller()
export class TasksController {
  constructor(
    @Inject(SendTask) private readonly sending: SendTask,
    @Inject(TransitionTask) private readonly transitions: TransitionTask,
    @Inject(ReadTasks) private readonly reads: ReadTasks,
  ) {}

  @MessagePattern(TASKS_SUBJECTS.send)
  send(@Payload() request: SendRequest): Promise<SendReply> {
    return this.sending.send(request);
  }

  @MessagePattern(TASKS_SUBJECTS.get)
  get(@Payload() request: GetRequest): Promise<TaskView> {
    return this.reads.get(request);
  }

  @MessagePattern(TASKS_SUBJECTS.list)
  list(@Payload() request: ListRequest): Promise<ListReply> {
    return this.reads.list(request);
  }

  @MessagePattern(TASKS_SUBJECTS.events)
  events(@Payload() request: TaskEventsRequest): Promise<TaskEventsReply> {
    return this.reads.events(request);
  }

  @MessagePattern(TASKS_SUBJECTS.inbox_events)
  inboxEvents(@Payload() request: InboxEventsRequest): Promise<InboxEventsReply> {
    return this.reads.inboxEvents(request);
  }

  @MessagePattern(TASKS_SUBJECTS.transition)
  transition(@Payload() request: TransitionRequest): Promise<TransitionReply> {
    return this.transitions.transition(request);
  }
}
