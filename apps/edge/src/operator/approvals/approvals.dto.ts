import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ADMIN_TASK_LIMITS, APPROVAL_LIMITS, TOOL_PROMPT_LIMITS } from '@app/contracts';

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

/** The query of `GET /admin/approvals/tool-prompts`: open tool prompts, oldest first. */
export class ToolPromptsQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(TOOL_PROMPT_LIMITS.pendingPageMax)
  limit?: number;
}

/** The body of an answer to a tool prompt: what the coding agent is told. */
export class ToolPromptAnswerBody {
  @IsOptional()
  @IsString()
  @MaxLength(TOOL_PROMPT_LIMITS.reasonChars)
  reason?: string;
}
