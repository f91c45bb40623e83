import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsIn, IsNotEmpty, IsOptional, IsString, ValidateNested } from 'class-validator';
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
  /**
   * Everything one answer of the upstream agent shows (its messages, artifacts and state), as
   * appends and transitions made in order in one transaction: all of them, or none.
   */
  apply: 'relay.tasks.v1.upstream_reports.apply',
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

/** The most changes one `apply` makes. */
export const UPSTREAM_APPLY_MAX_STEPS = 64;

/** One change of an `apply`: an append (`message`, with `artifacts`) or a transition (as `UpstreamTransitionRequest`). */
export class UpstreamReportStep {
  @IsIn(['append', 'transition'])
  kind: 'append' | 'transition';

  /** transition only. */
  @IsOptional()
  @IsIn(UPSTREAM_REPORT_COMMANDS)
  transition?: UpstreamReportCommand;

  @IsOptional()
  @IsString()
  result_summary?: string;

  @IsOptional()
  @IsString()
  reason?: string;

  /** Required by an append. */
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

export class UpstreamApplyRequest {
  @IsString()
  @IsNotEmpty()
  task_id: string;

  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(UPSTREAM_APPLY_MAX_STEPS)
  @ValidateNested({ each: true })
  @Type(() => UpstreamReportStep)
  steps: UpstreamReportStep[];
}

/** The task after an `apply`; `ended`: the task had ended on the sender's side (canceled) before a change it needed, which was not made. */
export interface UpstreamApplyReply extends UpstreamReportReply {
  ended: boolean;
}

/** The task's state after the change (the notifier needs no more). */
export interface UpstreamReportReply {
  task_id: string;
  state: TaskState;
}

export interface UpstreamReportsRpc {
  [UPSTREAM_REPORT_SUBJECTS.append]: { request: UpstreamAppendRequest; reply: UpstreamReportReply };
  [UPSTREAM_REPORT_SUBJECTS.transition]: { request: UpstreamTransitionRequest; reply: UpstreamReportReply };
  [UPSTREAM_REPORT_SUBJECTS.apply]: { request: UpstreamApplyRequest; reply: UpstreamApplyReply };
}
