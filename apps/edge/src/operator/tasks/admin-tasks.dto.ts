import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ADMIN_TASK_LIMITS, AGENT_LIMITS, INTENTS, LIST_ROLES, TASK_LIMITS, TASK_STATES, type Intent, type ListRole, type TaskState } from '@app/contracts';

/** `state=pending,accepted` and `state=pending&state=accepted` alike. */
const commaList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' || Array.isArray(value)
    ? ([] as unknown[])
        .concat(value)
        .flatMap((item) => (typeof item === 'string' ? item.split(',') : [item]))
        .map((item) => (typeof item === 'string' ? item.trim() : item))
        .filter((item) => item !== '')
    : value;

/** The filters of `GET /admin/tasks` and `GET /admin/search`. */
export class AdminTaskFilterQuery {
  @IsOptional()
  @IsString()
  @MaxLength(AGENT_LIMITS.handleChars)
  agent?: string;

  @IsOptional()
  @IsIn(LIST_ROLES)
  role?: ListRole;

  @IsOptional()
  @Transform(commaList)
  @IsArray()
  @ArrayMaxSize(TASK_STATES.length)
  @IsIn(TASK_STATES, { each: true, message: `state must be a comma-separated list of ${TASK_STATES.join(', ')}` })
  state?: TaskState[];

  @IsOptional()
  @Transform(commaList)
  @IsArray()
  @ArrayMaxSize(INTENTS.length)
  @IsIn(INTENTS, { each: true, message: `intent must be a comma-separated list of ${INTENTS.join(', ')}` })
  intent?: Intent[];

  @IsOptional()
  @IsString()
  @MaxLength(TASK_LIMITS.contextIdChars)
  context_id?: string;

  @IsOptional()
  @IsISO8601({ strict: true })
  created_after?: string;

  @IsOptional()
  @IsISO8601({ strict: true })
  created_before?: string;

  @IsOptional()
  @IsString()
  @MaxLength(ADMIN_TASK_LIMITS.cursorChars)
  cursor?: string;
}

/** The query of `GET /admin/tasks`. */
export class AdminTasksQuery extends AdminTaskFilterQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ADMIN_TASK_LIMITS.listMaxLimit)
  limit?: number;
}

/** The query of `GET /admin/search`. */
export class AdminSearchQuery extends AdminTaskFilterQuery {
  @IsString({ message: 'q is required: the words to search for' })
  @MaxLength(ADMIN_TASK_LIMITS.queryChars)
  @Matches(/\S/, { message: 'q must contain a word' })
  q: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ADMIN_TASK_LIMITS.searchMaxLimit)
  limit?: number;
}
