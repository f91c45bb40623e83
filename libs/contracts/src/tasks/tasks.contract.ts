import { Type } from 'class-transformer';
import type { PositionedTaskEvent } from '../events/task-event.model';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsObject,
  IsOptional,
  isObject,
  IsString,
  Matches,
  Min,
  ValidateIf,
  ValidateBy,
  ValidateNested,
  type ValidationArguments,
  type ValidationOptions,
} from 'class-validator';
import {
  ARTIFACT_TYPES,
  INTENTS,
  TASK_STATES,
  TRANSITIONS,
  type ArtifactType,
  type Intent,
  type MessageView,
  type TaskState,
  type TaskView,
  type Transition,
} from './task.model';
import { metadataBoundsProblem } from '../limits';
import { IsChainPolicy, IsHoldRules, IsToolPromptRules } from '../directory/directory.contract';
import type { HoldRule, ToolPromptRule } from '../directory/hold-rules';
import { CHAIN_REFERENCE_LIMIT, type ChainPolicy } from './chain-rules';

/** Request subjects the tasks service answers. */
export const TASKS_SUBJECTS = {
  /** Create a task (no `task_id`) or append a message to one. */
  send: 'relay.tasks.v1.send',
  /** One task for a participant; marks it read for the caller. */
  get: 'relay.tasks.v1.get',
  /** A participant's tasks, newest first, keyset-paginated. */
  list: 'relay.tasks.v1.list',
  /** A state transition (or a progress update without one). */
  transition: 'relay.tasks.v1.transition',
  /** A task's events after a position (a stream's replay), optionally with the task as of the newest of them. */
  events: 'relay.tasks.v1.events',
  /** The events of every task an agent takes part in, after a position (the live inbox's replay). */
  inbox_events: 'relay.tasks.v1.inbox_events',
} as const;

/** An object within the metadata bounds of TASK_LIMITS (keys per object, depth, bytes). */
export function IsBoundedMetadata(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isBoundedMetadata',
      validator: {
        validate: (value: unknown) => isObject(value) && !Array.isArray(value) && metadataBoundsProblem(value as Record<string, unknown>) === undefined,
        defaultMessage: (args?: ValidationArguments) => {
          const value = args?.value;
          if (!isObject(value) || Array.isArray(value)) return `${args?.property ?? 'metadata'} must be an object`;
          return `${args?.property ?? 'metadata'} ${metadataBoundsProblem(value as Record<string, unknown>) ?? 'is out of bounds'}`;
        },
      },
    },
    options,
  );
}

/*
 * The request classes below state each payload's shape for the services' contract guard (types,
 * required fields, allowed values, nesting). Sizes and counts are not restated here: they are
 * checked where a payload enters (the dialects' parsers, with TASK_LIMITS) and held by the
 * database's constraints.
 */

export class ParticipantRefDto {
  @IsString()
  @IsNotEmpty()
  id: string;

  @IsString()
  @IsNotEmpty()
  handle: string;

  @IsString()
  name: string;

  @IsOptional()
  @IsString()
  role: string | null;
}

export class FilePartDto {
  @IsOptional()
  @IsString()
  name?: string;

  @IsOptional()
  @IsString()
  mime_type?: string;

  @ValidateIf((file: FilePartDto) => file.uri === undefined)
  @IsString()
  bytes?: string;

  @ValidateIf((file: FilePartDto) => file.bytes === undefined)
  @IsString()
  uri?: string;
}

export const PART_KINDS = ['text', 'data', 'file'] as const;

/** A message or artifact part (`kind` text, data or file), as in `PartView`. */
export class PartDto {
  @IsIn(PART_KINDS)
  kind: (typeof PART_KINDS)[number];

  @ValidateIf((part: PartDto) => part.kind === 'text')
  @IsString()
  text?: string;

  @ValidateIf((part: PartDto) => part.kind === 'data')
  @IsNotEmpty()
  data?: unknown;

  @ValidateIf((part: PartDto) => part.kind === 'file')
  @ValidateNested()
  @Type(() => FilePartDto)
  file?: FilePartDto;

  /** A2A v1.0 `mediaType` of a text or data part (a file part has `file.mime_type`). */
  @IsOptional()
  @IsString()
  media_type?: string;

  /** A2A v1.0 `filename` of a text or data part (a file part has `file.name`). */
  @IsOptional()
  @IsString()
  filename?: string;

  @IsOptional()
  @IsBoundedMetadata()
  metadata?: Record<string, unknown>;
}

export class MessageInput {
  /** The client's message id (kept as the message id, and an idempotency key per sender); a UUID when absent. */
  @IsOptional()
  @IsString()
  message_id?: string;

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => PartDto)
  parts: PartDto[];

  /** Travels as the A2A message's metadata. */
  @IsOptional()
  @IsBoundedMetadata()
  payload?: Record<string, unknown>;
}

/**
 * An artifact: typed (AgentRelay: `type` and its `fields`, validated per type) or a standard A2A
 * artifact (`parts`, streamed in chunks with `append` / `last_chunk`).
 */
export class ArtifactInput {
  @IsOptional()
  @IsString()
  artifact_id?: string;

  @IsOptional()
  @IsIn(ARTIFACT_TYPES)
  type?: ArtifactType;

  @ValidateIf((artifact: ArtifactInput) => artifact.type !== undefined)
  @IsObject()
  fields?: Record<string, unknown>;

  @IsOptional()
  @IsString()
  name?: string;

  @IsOptional()
  @IsString()
  description?: string;

  @ValidateIf((artifact: ArtifactInput) => artifact.type === undefined)
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => PartDto)
  parts?: PartDto[];

  @IsOptional()
  @IsBoundedMetadata()
  metadata?: Record<string, unknown>;

  /** Append these parts to the artifact with the same id instead of replacing it. */
  @IsOptional()
  @IsBoolean()
  append?: boolean;

  @IsOptional()
  @IsBoolean()
  last_chunk?: boolean;
}

export class ProposedActionDto {
  @IsString()
  @IsNotEmpty()
  description: string;

  @IsArray()
  @IsString({ each: true })
  target_files: string[];

  @IsString()
  @IsNotEmpty()
  rationale: string;

  @IsOptional()
  @IsString()
  suggested_diff?: string | null;
}

export class SendRequest {
  /** The author of the message: the authenticated caller. */
  @ValidateNested()
  @Type(() => ParticipantRefDto)
  caller: ParticipantRefDto;

  /** Append to this task; absent to create one. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  task_id?: string;

  /** On an agent's endpoint (`/a2a/{handle}`): that agent's id. A task whose other party is not that agent is `thread_not_found`. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  counterpart_id?: string;

  /** The recipient of a new task (admitted by the directory); required on create. */
  @ValidateIf((request: SendRequest) => request.task_id === undefined)
  @ValidateNested()
  @Type(() => ParticipantRefDto)
  recipient?: ParticipantRefDto;

  /** On create: a new context when absent, a sibling in this context when given; on append: must match. */
  @IsOptional()
  @IsString()
  context_id?: string;

  @ValidateNested()
  @Type(() => MessageInput)
  message: MessageInput;

  @IsOptional()
  @IsIn(INTENTS)
  intent?: Intent;

  @IsOptional()
  @ValidateNested()
  @Type(() => ProposedActionDto)
  proposed_action?: ProposedActionDto | null;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ArtifactInput)
  artifacts?: ArtifactInput[];

  /** Task metadata (kept on create). */
  @IsOptional()
  @IsBoundedMetadata()
  metadata?: Record<string, unknown>;

  /**
   * On create: the handoffs this one may serve (A2A `referenceTaskIds`, the AgentRelay dialect's
   * `parent_task_id`); its parent is the first of them the caller sends or receives (docs/chains.md).
   * None of them being the caller's is `thread_not_found`, as for an unknown task.
   */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(CHAIN_REFERENCE_LIMIT)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  parent_task_ids?: string[];

  /**
   * On create: the W3C trace id of the `traceparent` the caller's request carried. A create that
   * names no parent serves the handoff of that trace the caller received (or sent), if any
   * (docs/chains.md); a root keeps it as its trace.
   */
  @IsOptional()
  @Matches(/^[0-9a-f]{32}$/)
  caller_trace_id?: string;

  /** AgentRelay's `metadata.client_idempotency_key`: an idempotency key per sender, besides the message id. */
  @IsOptional()
  @IsString()
  idempotency_key?: string;

  /** How many of the most recent messages the reply's task carries (all when absent). */
  @IsOptional()
  @IsInt()
  history_length?: number;

  /**
   * On create: the recipient's hold rules, as the directory's admission answered them; the tasks
   * service decides with the handoff's content whether one holds it (`decideHold`).
   */
  @IsOptional()
  @IsHoldRules()
  hold_rules?: HoldRule[];

  /** On create: the recipient's tool-prompt rules, decided the same way (`decideToolPrompts`). */
  @IsOptional()
  @IsToolPromptRules()
  tool_prompt_rules?: ToolPromptRule[];

  /** On create: the recipient's own chain bounds, as the directory's admission answered them (`chainLimitsWith`). */
  @IsOptional()
  @IsChainPolicy()
  chain_policy?: ChainPolicy;

  /** On create: the chain bounds of the recipient's org, under `chain_policy` (`chainLimitsWith`). */
  @IsOptional()
  @IsChainPolicy()
  org_chain_policy?: ChainPolicy;

  /** On create: the open-handoffs quota of the sender's org (`decideOpenHandoffs`); absent: none. */
  @IsOptional()
  @IsInt()
  @Min(0)
  sender_org_open_handoffs?: number;
}

/** Which message a send appended, without its content: a reply never echoes the message back. */
export interface MessageRef {
  id: string;
  sequence_no: number;
  created_at: string;
}

export interface SendReply {
  task: TaskView;
  /** The message this request appended (or the original one on an idempotent replay). */
  message: MessageRef;
  created: boolean;
  idempotent_replay: boolean;
}

export class GetRequest {
  @IsString()
  @IsNotEmpty()
  caller_id: string;

  @IsString()
  @IsNotEmpty()
  task_id: string;

  /** On an agent's endpoint (`/a2a/{handle}`): that agent's id. A task whose other party is not that agent is `thread_not_found`. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  counterpart_id?: string;

  /** 0 = no messages, N = the most recent N; all when absent. */
  @IsOptional()
  @IsInt()
  history_length?: number;

  /**
   * Only the messages after this sequence number, oldest first: pages through a task whose
   * messages do not fit one reply (`messages` then holds fewer than the task has).
   */
  @IsOptional()
  @IsInt()
  after_sequence_no?: number;

  /** Whether reading marks the task read for the caller (default true). */
  @IsOptional()
  @IsBoolean()
  mark_read?: boolean;
}

export const LIST_ROLES = ['recipient', 'sender', 'either'] as const;
export type ListRole = (typeof LIST_ROLES)[number];
/** `created`: newest task first; `status`: most recent status change first. */
export const LIST_ORDERS = ['created', 'status'] as const;
export type ListOrder = (typeof LIST_ORDERS)[number];

export class ListRequest {
  @IsString()
  @IsNotEmpty()
  caller_id: string;

  @IsOptional()
  @IsIn(LIST_ROLES)
  role?: ListRole;

  @IsOptional()
  @IsArray()
  @IsIn(TASK_STATES, { each: true })
  states?: TaskState[];

  /** Tasks created or updated after this instant. */
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  /** Tasks whose status changed after this instant. */
  @IsOptional()
  @IsISO8601({ strict: true })
  status_timestamp_after?: string;

  /** Only tasks between the caller and this agent. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  counterpart_id?: string;

  @IsOptional()
  @IsString()
  context_id?: string;

  @IsOptional()
  @IsInt()
  limit?: number;

  @IsOptional()
  @IsString()
  cursor?: string;

  @IsOptional()
  @IsIn(LIST_ORDERS)
  order?: ListOrder;

  /** Messages per item, most recent last (default 0). */
  @IsOptional()
  @IsInt()
  history_length?: number;

  @IsOptional()
  @IsBoolean()
  include_total?: boolean;

  /** Whether items carry their artifacts (default true). */
  @IsOptional()
  @IsBoolean()
  include_artifacts?: boolean;

  /** Cut each item's summary to this many characters (default: whole). */
  @IsOptional()
  @IsInt()
  summary_max_chars?: number;
}

export interface ListReply {
  /** At most `limit` items; fewer when more would not fit one reply (`next_cursor` then goes on). */
  items: TaskView[];
  next_cursor: string | null;
  /** Present when `include_total` was asked for. */
  total_size?: number;
}

/** A transition, or `progress`: a status message and/or artifacts without a state change. */
export const TASK_COMMANDS = [...TRANSITIONS, 'progress'] as const;
export type TaskCommand = Transition | 'progress';

/**
 * `pending_only`: the AgentRelay cancel (`tasks/update`, `tasks/cancel {task_id}`);
 * `any_active`: the standard A2A cancel (pending, accepted or input_required).
 */
export const CANCEL_MODES = ['pending_only', 'any_active'] as const;
export type CancelMode = (typeof CANCEL_MODES)[number];

export class TransitionRequest {
  @IsString()
  @IsNotEmpty()
  caller_id: string;

  @IsString()
  @IsNotEmpty()
  task_id: string;

  /** On an agent's endpoint (`/a2a/{handle}`): that agent's id. A task whose other party is not that agent is `thread_not_found`. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  counterpart_id?: string;

  @IsIn(TASK_COMMANDS)
  transition: TaskCommand;

  @IsOptional()
  @IsIn(CANCEL_MODES)
  cancel_mode?: CancelMode;

  /** Recorded in the audit log (accept). */
  @IsOptional()
  @IsString()
  session_id?: string;

  /** complete. */
  @IsOptional()
  @IsString()
  result_summary?: string;

  /** decline, fail, cancel. */
  @IsOptional()
  @IsString()
  reason?: string;

  /** The question of request_input (required there), or a message with any other transition. */
  @IsOptional()
  @ValidateNested()
  @Type(() => MessageInput)
  message?: MessageInput;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ArtifactInput)
  artifacts?: ArtifactInput[];

  @IsOptional()
  @IsInt()
  history_length?: number;
}

export interface TransitionReply {
  task: TaskView;
  /** The message appended with the transition, if any. */
  message: MessageView | null;
}

/** How many events one `events` reply carries at most; a replay asks again after the last one. */
export const TASK_EVENTS_PAGE_LIMIT = 200;

/** Replay of one task's events for a participant (docs/events.md#positions-and-stream-ids). */
export class TaskEventsRequest {
  @IsString()
  @IsNotEmpty()
  caller_id: string;

  @IsString()
  @IsNotEmpty()
  task_id: string;

  /** On an agent's endpoint (`/a2a/{handle}`): that agent's id. A task whose other party is not that agent is `thread_not_found`. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  counterpart_id?: string;

  /** The events after this outbox position; it must be a position of one of this task's events (else `invalid_params`). */
  @IsOptional()
  @IsString()
  after_position?: string;

  /** Also answer the task (with `history_length` messages) as of `position`, read in the same snapshot. */
  @IsOptional()
  @IsBoolean()
  snapshot?: boolean;

  @IsOptional()
  @IsInt()
  history_length?: number;
}

export interface TaskEventsReply {
  /**
   * At most TASK_EVENTS_PAGE_LIMIT events after `after_position`, oldest first, within
   * `TASK_LIMITS.replyEventBytes` with the task (none when only a snapshot was asked, or when the
   * next event does not fit beside the task: `has_more` then says to ask again).
   */
  events: PositionedTaskEvent[];
  /** Whether more events follow the last one answered. */
  has_more: boolean;
  /** The position of the task's newest event in the snapshot read. */
  position: string;
  task?: TaskView;
}

/** Replay of the events of every task an agent takes part in (docs/dialects.md#live-inbox-taskswatch). */
export class InboxEventsRequest {
  /** The agent's handle, as task events name their sender and recipient. */
  @IsString()
  @IsNotEmpty()
  caller_handle: string;

  /** The events after this outbox position (any position: the inbox spans tasks); none: only the newest position. */
  @IsOptional()
  @IsString()
  after_position?: string;
}

export interface InboxEventsReply {
  events: PositionedTaskEvent[];
  has_more: boolean;
  /** Without `after_position`: the position of the agent's newest event (0 before its first); with it, the newest outbox position when read. */
  position: string;
}

export interface TasksRpc {
  [TASKS_SUBJECTS.send]: { request: SendRequest; reply: SendReply };
  [TASKS_SUBJECTS.get]: { request: GetRequest; reply: TaskView };
  [TASKS_SUBJECTS.list]: { request: ListRequest; reply: ListReply };
  [TASKS_SUBJECTS.transition]: { request: TransitionRequest; reply: TransitionReply };
  [TASKS_SUBJECTS.events]: { request: TaskEventsRequest; reply: TaskEventsReply };
  [TASKS_SUBJECTS.inbox_events]: { request: InboxEventsRequest; reply: InboxEventsReply };
}
