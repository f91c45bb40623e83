import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ADMIN_TASK_LIMITS, APPROVAL_LIMITS } from '@app/contracts';

/** The query of `GET /admin/approvals`: held handoffs, newest first. */
export class ApprovalsQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ADMIN_TASK_LIMITS.listMaxLimit)
  limit?: number;

  @IsOptional()
  @IsString()
  @MaxLength(ADMIN_TASK_LIMITS.cursorChars)
  cursor?: string;
}

/** The body of an approve or a deny: the approver's comment (a deny's reason, which the sender is told). */
export class ApprovalDecisionBody {
  @IsOptional()
  @IsString()
  @MaxLength(APPROVAL_LIMITS.commentChars)
  comment?: string;
}
