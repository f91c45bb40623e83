import { z } from 'zod';
import { artifactViewSchema, INTENTS, partViewSchema, TASK_STATES, type TaskState } from '../tasks/task.model';
import { TASK_EVENT_SUBJECT_PREFIX } from '../subjects';

export const TASK_EVENT_TYPES = [
  'held',
  'created',
  'message_appended',
  'artifact_updated',
  'accepted',
  'input_required',
  'completed',
  'failed',
  'rejected',
  'canceled',
] as const;
export type TaskEventType = (typeof TASK_EVENT_TYPES)[number];

export const TASK_EVENT_SCHEMA_VERSION = 1;

/**
 * The header the outbox relay puts on every task event it publishes: the event's position in the
 * outbox (a decimal bigint), which orders one task's events and is the stream event id
 * (docs/events.md#positions-and-stream-ids).
 */
export const TASK_EVENT_POSITION_HEADER = 'Relay-Event-Position';

/** What each task event type says happened (the JSON Schema and AsyncAPI descriptions of its message). */
export const TASK_EVENT_DESCRIPTIONS: Record<TaskEventType, string> = {
  held: "A task was created held for approval (state held) by a hold rule of its recipient's trust policy; `hold` names the rule. Only its sender and the approvers are told: approved, it is `created` then.",
  created: 'A task was created (state pending).',
  message_appended:
    'A message was added without a transition of its own (an append, a progress update with a message); on a resume the state is accepted again.',
  artifact_updated: "An artifact was added, replaced or appended to (one event per artifact, before the change's own event).",
  accepted: "The recipient accepted the task, or the sender answered the recipient's question (resume).",
  input_required: 'The recipient asked the sender for input (request_input).',
  completed: 'The recipient completed the task.',
  failed: 'The recipient reported the task failed.',
  rejected: 'The recipient declined the task.',
  canceled: 'The sender canceled the task (state cancelled).',
};

/** The message a task event is about, with what a stream needs to render it. */
export const taskEventMessageSchema = z.object({
  id: z.string().meta({ description: "The message's id: its client's messageId, or a UUID the relay made." }),
  sequence_no: z.number().int().meta({ description: "The message's place in its thread, from 1." }),
  from: z.string().meta({ description: 'Handle of the author.' }),
  body: z.string().meta({ description: 'The first text part.' }),
  /** The message's parts as stored (absent on events written before they were carried). */
  parts: z.array(partViewSchema).optional().meta({ description: "The message's parts as stored (absent on events written before they were carried)." }),
  /** The message's metadata (`payload`), when it has any. */
  payload: z.record(z.string(), z.unknown()).optional().meta({ description: "The message's metadata (`payload`), when it has any." }),
});
export type TaskEventMessage = z.infer<typeof taskEventMessageSchema>;

/** One artifact as an `artifact_updated` event carries it: the whole artifact, or the chunk appended (then `parts` holds the chunk's parts only). */
export const taskEventArtifactSchema = artifactViewSchema
  .extend({
    append: z.boolean().meta({ description: 'True when `parts` are only the parts this change appended.' }),
    last_chunk: z.boolean(),
  })
  .meta({ description: 'The artifact added or replaced, or the chunk appended to it.' });
export type TaskEventArtifact = z.infer<typeof taskEventArtifactSchema>;

/** The JetStream subject of a task event type: `relay.events.task.<event>`. */
export function taskEventSubject(type: TaskEventType): string {
  return `${TASK_EVENT_SUBJECT_PREFIX}.${type}`;
}

const taskEventFields = {
  schema_version: z.literal(TASK_EVENT_SCHEMA_VERSION).meta({ description: "The payload's version." }),
  event_id: z.uuid().meta({ description: 'UUID, also the `Nats-Msg-Id` and the CloudEvents `id`; the idempotency key for consumers.' }),
  type: z.enum(TASK_EVENT_TYPES).meta({ description: 'The event type (also the last subject token).' }),
  task_id: z.string().meta({ description: 'The task (a ULID); the CloudEvents `subject`.' }),
  context_id: z.string(),
  sender: z.string().meta({ description: "The sending agent's handle." }),
  recipient: z.string().meta({ description: "The receiving agent's handle." }),
  state: z.enum(TASK_STATES).meta({ description: "The task's internal state after the change (spelled `cancelled`)." }),
  sequence_no: z.number().int().nullable().meta({ description: 'The sequence number of the message the event is about, or null.' }),
  occurred_at: z.iso.datetime().meta({ description: 'ISO-8601 time of the change (UTC); the CloudEvents `time`.' }),
  /** Enough of the task to act on without reading it back. */
  task: z
    .object({
      intent: z.enum(INTENTS),
      summary: z.string().meta({ description: "The thread's first message text." }),
      message_count: z.number().int(),
      latest_message: taskEventMessageSchema.nullable(),
      result_summary: z.string().nullable(),
      reason: z.string().nullable(),
    })
    .meta({ description: 'Enough of the task to act on without reading it back.' }),
  /** On `artifact_updated` only: the artifact added or replaced, or the chunk appended to it. */
  artifact: taskEventArtifactSchema.optional().meta({ description: 'On `artifact_updated` only.' }),
  /** On `held` only: the hold rule that keeps the task for a person's approval. */
  hold: z
    .object({
      rule: z.string().meta({ description: 'The name of the hold rule that matched.' }),
      reason: z.string().meta({ description: 'Why, as the sender is told.' }),
      expires_at: z.iso.datetime().meta({ description: 'When the hold expires (the task is then rejected) unless a person decides it first.' }),
      four_eyes: z.boolean().meta({ description: "Whether the sending agent's owner is refused as its approver." }),
    })
    .optional()
    .meta({ description: 'On `held` only: the hold rule that keeps the task for approval.' }),
  /** Where the task sits in its chain of handoffs (docs/chains.md). */
  chain: z
    .object({
      parent_task_id: z.string().nullable().meta({ description: "The handoff this task was made for, or null for a chain's root." }),
      root_task_id: z.string().meta({ description: 'The first handoff of the chain (the task itself for a root).' }),
      depth: z.number().int().min(0).meta({ description: 'How deep the task sits below its root (the root: 0).' }),
      root_sender: z.string().optional().meta({
        description:
          "The handle of the root's sender: on whose behalf the chain runs (the task's own sender on a root); absent on events written before it was kept.",
      }),
    })
    .optional()
    .meta({ description: 'Where the task sits in its chain of handoffs (absent on events written before chains were kept).' }),
  audience: z.literal('sender').optional().meta({
    description:
      '`sender` on the events of a task its recipient never saw (held for approval, then denied, expired or cancelled): no stream, webhook or push of the recipient may carry them.',
  }),
};

/** Versioned payload of every task event (documented for internal consumers in docs/events.md): the one description of it. */
export const taskEventSchema = z.object(taskEventFields).meta({ title: 'TaskEvent', description: 'Any task event, schema version 1.' });
export type TaskEvent = z.infer<typeof taskEventSchema>;

/** The task's state after an event of a type that always leaves it in one (the others leave it as it was, or resumed). */
export const TASK_STATE_AFTER_EVENT: Partial<Record<TaskEventType, TaskState>> = {
  held: 'held',
  created: 'pending',
  accepted: 'accepted',
  input_required: 'input_required',
  completed: 'completed',
  failed: 'failed',
  rejected: 'rejected',
  canceled: 'cancelled',
};

/** The payload of one task event type: `type` fixed, the state it leaves when it always leaves one, and the artifact required on `artifact_updated`. */
export function taskEventSchemaOf(type: TaskEventType) {
  const state = TASK_STATE_AFTER_EVENT[type];
  return z
    .object({
      ...taskEventFields,
      type: z.literal(type).meta({ description: 'The event type (also the last subject token).' }),
      ...(state ? { state: z.literal(state).meta({ description: "The task's internal state after the change." }) } : {}),
      ...(type === 'artifact_updated' ? { artifact: taskEventArtifactSchema } : {}),
      ...(type === 'held' ? { hold: taskEventFields.hold.unwrap(), audience: z.literal('sender') } : {}),
    })
    .meta({ title: `TaskEvent ${type}`, description: TASK_EVENT_DESCRIPTIONS[type] });
}

/** A task event with its outbox position, as a replay reads it back. */
export interface PositionedTaskEvent {
  /** The outbox position (decimal bigint as a string). */
  position: string;
  event: TaskEvent;
}
