import { IsArray, IsIn, IsInt, IsNotEmpty, IsOptional, IsString } from 'class-validator';
import type { TaskView } from './task.model';
import { APPROVAL_DECISIONS, type ApprovalDecision, type PendingToolPromptsReply } from './approvals.model';
import { PERMISSION_DECISIONS, type PermissionDecision } from './tool-prompts';

/** Request subjects of held handoffs (docs/decisions/0024-held-handoffs.md), answered by the tasks service. */
export const APPROVALS_SUBJECTS = {
  /** A person approves (the task becomes pending, delivered as if just sent) or denies (rejected, the sender told) a held task. */
  decide: 'relay.tasks.v1.approvals.decide',
  /** A person answers a tool prompt of a handoff whose tool prompts people answer (docs/decisions/0031-tool-prompts-answered-by-people.md). */
  answerToolPrompt: 'relay.tasks.v1.approvals.answer_tool_prompt',
  /** The open tool prompts people answer, oldest first. */
  pendingToolPrompts: 'relay.tasks.v1.approvals.pending_tool_prompts',
} as const;

export const APPROVAL_LIMITS = {
  commentChars: 2000,
  actorChars: 200,
} as const;

export class DecideHoldRequest {
  @IsString()
  @IsNotEmpty()
  task_id: string;

  @IsIn(APPROVAL_DECISIONS)
  decision: ApprovalDecision;

  /** The approver's words: on a deny, the reason the sender is told. */
  @IsOptional()
  @IsString()
  comment?: string;

  /** Who decided, as the admin audit names them: the person's email, else their subject, else the admin actor (the edge cuts it to APPROVAL_LIMITS.actorChars). */
  @IsString()
  @IsNotEmpty()
  decided_by: string;

  /** The person's email from their sign-in, when it fits APPROVAL_LIMITS.actorChars. */
  @IsOptional()
  @IsString()
  decided_by_email?: string;
}

export class AnswerToolPromptRequest {
  @IsString()
  @IsNotEmpty()
  task_id: string;

  @IsString()
  @IsNotEmpty()
  request_id: string;

  @IsIn(PERMISSION_DECISIONS)
  decision: PermissionDecision;

  /** What the coding agent is told. */
  @IsOptional()
  @IsString()
  reason?: string;

  /** Who answered, as the admin audit names them (cut by the edge as `decided_by` is). */
  @IsString()
  @IsNotEmpty()
  answered_by: string;
}

export class PendingToolPromptsRequest {
  @IsOptional()
  @IsInt()
  limit?: number;

  /** Only prompts of handoffs one of whose parties is in one of these orgs (a person's scope, set by the edge); absent: all. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  orgs?: string[];
}

export interface ApprovalsRpc {
  [APPROVALS_SUBJECTS.decide]: { request: DecideHoldRequest; reply: TaskView };
  [APPROVALS_SUBJECTS.answerToolPrompt]: { request: AnswerToolPromptRequest; reply: TaskView };
  [APPROVALS_SUBJECTS.pendingToolPrompts]: { request: PendingToolPromptsRequest; reply: PendingToolPromptsReply };
}
