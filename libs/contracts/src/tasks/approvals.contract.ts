import { IsEmail, IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { TASK_LIMITS } from '../limits';
import type { TaskView } from './task.model';
import { APPROVAL_DECISIONS, type ApprovalDecision } from './approvals.model';

/** Request subjects of held handoffs (docs/decisions/0024-held-handoffs.md), answered by the tasks service. */
export const APPROVALS_SUBJECTS = {
  /** A person approves (the task becomes pending, delivered as if just sent) or denies (rejected, the sender told) a held task. */
  decide: 'relay.tasks.v1.approvals.decide',
} as const;

export const APPROVAL_LIMITS = {
  commentChars: 2000,
  actorChars: 200,
} as const;

export class DecideHoldRequest {
  @IsString()
  @IsNotEmpty()
  @MaxLength(TASK_LIMITS.taskIdChars)
  task_id: string;

  @IsIn(APPROVAL_DECISIONS)
  decision: ApprovalDecision;

  /** The approver's words: on a deny, the reason the sender is told. */
  @IsOptional()
  @IsString()
  @MaxLength(APPROVAL_LIMITS.commentChars)
  comment?: string;

  /** Who decided, as the admin audit names them: the person's email, else their subject, else the admin actor. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(APPROVAL_LIMITS.actorChars)
  decided_by: string;

  @IsOptional()
  @IsEmail()
  @MaxLength(APPROVAL_LIMITS.actorChars)
  decided_by_email?: string;
}

export interface ApprovalsRpc {
  [APPROVALS_SUBJECTS.decide]: { request: DecideHoldRequest; reply: TaskView };
}
