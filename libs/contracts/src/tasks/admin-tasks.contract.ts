import { ArrayMaxSize, IsArray, IsIn, IsInt, IsISO8601, IsNotEmpty, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { TASK_LIMITS } from '../limits';
import { LIST_ROLES, type ListRole } from './tasks.contract';
import { INTENTS, TASK_STATES, type Intent, type TaskState } from './task.model';
import type {
  AdminCountsReply,
  AdminEventsReply,
  AdminOverviewReply,
  AdminSearchPage,
  AdminTaskChainReply,
  AdminTaskDetail,
  AdminTaskPage,
  AgentSearchReply,
} from './admin-tasks.model';

/** Request subjects of the tasks service for the admin API (relay-wide reads) and the agents' search. */
export const ADMIN_TASKS_SUBJECTS = {
  /** Tasks across all agents, newest first, keyset-paginated. */
  list: 'relay.tasks.v1.admin.list',
  /** One task with its timeline (from the outbox) and its transition audit. */
  get: 'relay.tasks.v1.admin.get',
  /** Full-text search over message text and artifact names, relay-wide. */
  search: 'relay.tasks.v1.admin.search',
  /** Every task event after an outbox position (the admin event stream's replay), byte-bounded. */
  events: 'relay.tasks.v1.admin.events',
  /** An agent's tasks counted by state, as recipient (inbox) and as sender. */
  counts: 'relay.tasks.v1.admin.counts',
  /** Activity of the last hour, open tasks, the oldest pending task and the outbox lag. */
  overview: 'relay.tasks.v1.admin.overview',
  /** The same search, scoped to the tasks the caller takes part in (`tasks/search`). */
  agentSearch: 'relay.tasks.v1.search',
  /** A handoff's chain: the path from its root to it, its children, and the chain's tree from the root down, bounded. */
  chain: 'relay.tasks.v1.admin.chain',
} as const;

export const ADMIN_TASK_LIMITS = {
  listDefaultLimit: 50,
  listMaxLimit: 200,
  searchDefaultLimit: 20,
  searchMaxLimit: 100,
  queryChars: 500,
  cursorChars: 512,
  /** Characters of a task's summary on a list row. */
  rowSummaryChars: 300,
  /**
   * Timeline entries one task read carries at most, and the bytes of the whole reply (the task, as
   * GetTask bounds it, then timeline entries while they fit; `timeline_truncated` past either).
   */
  timelineEntries: 500,
  detailReplyBytes: 900 * 1024,
  /** Audit rows one task read carries at most. */
  auditRows: 500,
  /** Bytes of events one admin replay page carries at most (at least one event). */
  eventsPageBytes: 512 * 1024,
  eventsPageEvents: 200,
  /** Highlights per search hit, and fragments' characters per highlight. */
  highlightsPerHit: 3,
  /**
   * Handoffs one chain read carries besides the path from the root to the task (a chain's budget
   * may allow a million): by default, and at most when asked for more.
   */
  chainDefaultNodes: 200,
  chainMaxNodes: 500,
} as const;

/** Property decorators as one, applied as if written in this order above the property. */
function stacked(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => {
    for (const decorator of [...decorators].reverse()) decorator(target, key);
  };
}

/**
 * The checks of the admin list's and search's fields, described once: the tasks service's requests
 * below use them, and so do the edge's queries of `GET /admin/tasks` and `GET /admin/search`, which
 * spell some fields differently and add how a query string carries lists and numbers.
 */
export const ADMIN_TASK_CHECKS = {
  role: (): PropertyDecorator => stacked(IsOptional(), IsIn(LIST_ROLES)),
  /** `message`: what a value that is not a state is told (class-validator's words without it). */
  states: (options: { message?: string } = {}): PropertyDecorator =>
    stacked(IsOptional(), IsArray(), ArrayMaxSize(TASK_STATES.length), IsIn(TASK_STATES, { each: true, ...options })),
  intents: (options: { message?: string } = {}): PropertyDecorator =>
    stacked(IsOptional(), IsArray(), ArrayMaxSize(INTENTS.length), IsIn(INTENTS, { each: true, ...options })),
  contextId: (): PropertyDecorator => stacked(IsOptional(), IsString(), MaxLength(TASK_LIMITS.contextIdChars)),
  /** `created_after` and `created_before`. */
  createdBound: (): PropertyDecorator => stacked(IsOptional(), IsISO8601({ strict: true })),
  cursor: (): PropertyDecorator => stacked(IsOptional(), IsString(), MaxLength(ADMIN_TASK_LIMITS.cursorChars)),
  listLimit: (): PropertyDecorator => stacked(IsOptional(), IsInt(), Min(1), Max(ADMIN_TASK_LIMITS.listMaxLimit)),
  searchLimit: (): PropertyDecorator => stacked(IsOptional(), IsInt(), Min(1), Max(ADMIN_TASK_LIMITS.searchMaxLimit)),
  /** The words of an admin search, once they are a string. */
  searchWords: (): PropertyDecorator => stacked(MaxLength(ADMIN_TASK_LIMITS.queryChars), Matches(/\S/, { message: 'q must contain a word' })),
};

/** The filters the admin list and search share; the agent is given by id (the edge resolves the handle). */
export class AdminTaskFilter {
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  agent_id?: string;

  /** With `agent_id`: the agent as sender, recipient or either (default either). */
  @ADMIN_TASK_CHECKS.role()
  role?: ListRole;

  @ADMIN_TASK_CHECKS.states()
  states?: TaskState[];

  @ADMIN_TASK_CHECKS.intents()
  intents?: Intent[];

  @ADMIN_TASK_CHECKS.contextId()
  context_id?: string;

  @ADMIN_TASK_CHECKS.createdBound()
  created_after?: string;

  @ADMIN_TASK_CHECKS.createdBound()
  created_before?: string;

  @ADMIN_TASK_CHECKS.cursor()
  cursor?: string;

  /** Only tasks one of whose parties is in one of these orgs (a person's scope, set by the edge); absent: every task. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  orgs?: string[];
}

export class AdminListTasksRequest extends AdminTaskFilter {
  @ADMIN_TASK_CHECKS.listLimit()
  limit?: number;
}

export class AdminSearchTasksRequest extends AdminTaskFilter {
  @IsString()
  @ADMIN_TASK_CHECKS.searchWords()
  query: string;

  @ADMIN_TASK_CHECKS.searchLimit()
  limit?: number;
}

/** `tasks/search`: the caller's own tasks only (as sender or recipient). */
export class AgentSearchTasksRequest {
  @IsString()
  @IsNotEmpty()
  caller_id: string;

  /** On an agent's endpoint (`/a2a/{handle}`): that agent's id. A task whose other party is not that agent is `thread_not_found`. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  counterpart_id?: string;

  @IsString()
  query: string;

  @IsOptional()
  @IsIn(LIST_ROLES)
  role?: ListRole;

  /** Each state once (the edge's parser makes it a set). */
  @IsOptional()
  @IsArray()
  @IsIn(TASK_STATES, { each: true })
  states?: TaskState[];

  @IsOptional()
  @IsInt()
  limit?: number;

  @IsOptional()
  @IsString()
  cursor?: string;
}

export class AdminGetTaskRequest {
  @IsString()
  @IsNotEmpty()
  task_id: string;
}

export class AdminTaskChainRequest {
  @IsString()
  @IsNotEmpty()
  task_id: string;

  /** Handoffs of the tree to carry besides the path to the task (default `chainDefaultNodes`). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(ADMIN_TASK_LIMITS.chainMaxNodes)
  limit?: number;
}

export class AdminEventsRequest {
  /** The events after this outbox position; without it only the newest position is answered. */
  @IsOptional()
  @IsString()
  after_position?: string;
}

export class AdminCountsRequest {
  @IsString()
  @IsNotEmpty()
  agent_id: string;
}

export class AdminOverviewRequest {
  /** Only tasks one of whose parties is in one of these orgs (a person's scope, set by the edge); absent: the whole relay. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  orgs?: string[];
}

export interface AdminTasksRpc {
  [ADMIN_TASKS_SUBJECTS.list]: { request: AdminListTasksRequest; reply: AdminTaskPage };
  [ADMIN_TASKS_SUBJECTS.get]: { request: AdminGetTaskRequest; reply: AdminTaskDetail };
  [ADMIN_TASKS_SUBJECTS.search]: { request: AdminSearchTasksRequest; reply: AdminSearchPage };
  [ADMIN_TASKS_SUBJECTS.events]: { request: AdminEventsRequest; reply: AdminEventsReply };
  [ADMIN_TASKS_SUBJECTS.counts]: { request: AdminCountsRequest; reply: AdminCountsReply };
  [ADMIN_TASKS_SUBJECTS.overview]: { request: AdminOverviewRequest; reply: AdminOverviewReply };
  [ADMIN_TASKS_SUBJECTS.agentSearch]: { request: AgentSearchTasksRequest; reply: AgentSearchReply };
  [ADMIN_TASKS_SUBJECTS.chain]: { request: AdminTaskChainRequest; reply: AdminTaskChainReply };
}
