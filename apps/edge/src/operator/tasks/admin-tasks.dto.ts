import { Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { OrgFilterQuery } from '../org-scope/org-filter';
import { ADMIN_TASK_CHECKS, ADMIN_TASK_LIMITS, AGENT_LIMITS, INTENTS, TASK_STATES, type Intent, type ListRole, type TaskState } from '@app/contracts';

/** `state=pending,accepted` and `state=pending&state=accepted` alike. */
const commaList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' || Array.isArray(value)
    ? ([] as unknown[])
        .concat(value)
        .flatMap((item) => (typeof item === 'string' ? item.split(',') : [item]))
        .map((item) => (typeof item === 'string' ? item.trim() : item))
        .filter((item) => item !== '')
    : value;

/** The filters of `GET /admin/tasks` and `GET /admin/search`: the tasks service's filter, the agent by handle, one org by name. */
export class AdminTaskFilterQuery extends OrgFilterQuery {
  @IsOptional()
  @IsString()
  @MaxLength(AGENT_LIMITS.handleChars)
  agent?: string;

  @ADMIN_TASK_CHECKS.role()
  role?: ListRole;

  @Transform(commaList)
  @ADMIN_TASK_CHECKS.states({ message: `state must be a comma-separated list of ${TASK_STATES.join(', ')}` })
  state?: TaskState[];

  @Transform(commaList)
  @ADMIN_TASK_CHECKS.intents({ message: `intent must be a comma-separated list of ${INTENTS.join(', ')}` })
  intent?: Intent[];

  @ADMIN_TASK_CHECKS.contextId()
  context_id?: string;

  @ADMIN_TASK_CHECKS.createdBound()
  created_after?: string;

  @ADMIN_TASK_CHECKS.createdBound()
  created_before?: string;

  @ADMIN_TASK_CHECKS.cursor()
  cursor?: string;
}

/** The query of `GET /admin/tasks`. */
export class AdminTasksQuery extends AdminTaskFilterQuery {
  @Type(() => Number)
  @ADMIN_TASK_CHECKS.listLimit()
  limit?: number;
}

/** The query of `GET /admin/search`. */
export class AdminSearchQuery extends AdminTaskFilterQuery {
  @IsString({ message: 'q is required: the words to search for' })
  @ADMIN_TASK_CHECKS.searchWords()
  q: string;

  @Type(() => Number)
  @ADMIN_TASK_CHECKS.searchLimit()
  limit?: number;
}

/** The query of `GET /admin/tasks/{id}/chain`: how many of the chain's handoffs to carry besides the path to the task. */
export class AdminTaskChainQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ADMIN_TASK_LIMITS.chainMaxNodes)
  limit?: number;
}
