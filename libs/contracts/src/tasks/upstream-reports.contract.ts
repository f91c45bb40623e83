import { Type } from 'class-transformer';
import { IsArray, IsIn, IsNotEmpty, IsOptional, IsString, ValidateNested } from 'class-validator';
import type { TaskState } from './task-vocabulary';
import { ArtifactInput, MessageInput, type TaskCommand } from './tasks.contract';

/**
 * What the notifier reports of an upstream agent's A2A server (decision 0025): the tasks service
 * makes each change as the task's recipient, and only on a task delivered to an upstream agent
 * and not held from it. Nothing here creates a task or speaks as its sender.
 */
export const UPSTREAM_REPORT_SUBJECTS = {
  /** A message (and artifacts) the upstream agent answered, added to the task as the recipient. */
  append: 'relay.tasks.v1.upstream_reports.append',
  /** A change of state (or a status update) the upstream agent answered, made as the recipient. */
  transition: 'relay.tasks.v1.upstream_reports.transition',
} as const;

/** The recipient's commands: an upstream agent never cancels (the sender's command). */
export const UPSTREAM_REPORT_COMMANDS = ['accept', 'complete', 'decline', 'fail', 'request_input', 'progress'] as const satisfies readonly TaskCommand[];
export type UpstreamReportCommand = (typeof UPSTREAM_REPORT_COMMANDS)[number];

export class UpstreamAppendRequest {
  @IsString()
  @IsNotEmpty()
  task_id: string;

  @ValidateNested()
  @Type(() => MessageInput)
  message: MessageInput;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ArtifactInput)
  artifacts?: ArtifactInput[];
}

export class UpstreamTransitionRequest {
  @IsString()
  @IsNotEmpty()
  task_id: string;

  @IsIn(UPSTREAM_REPORT_COMMANDS)
  transition: UpstreamReportCommand;

  /** complete. */
  @IsOptional()
  @IsString()
  result_summary?: string;

  /** decline, fail. */
  @IsOptional()
  @IsString()
  reason?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => MessageInput)
  message?: MessageInput;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ArtifactInput)
  artifacts?: ArtifactInput[];
}

/** The task's state after the change (the notifier needs no more). */
export interface UpstreamReportReply {
  task_id: string;
  state: TaskState;
}

export interface UpstreamReportsRpc {
  [UPSTREAM_REPORT_SUBJECTS.append]: { request: UpstreamAppendRequest; reply: UpstreamReportReply };
  [UPSTREAM_REPORT_SUBJECTS.transition]: { request: UpstreamTransitionRequest; reply: UpstreamReportReply };
}
