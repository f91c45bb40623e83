import { z } from 'zod';
import { ARTIFACT_TYPES, type HoldOutcome, type Intent, type TaskState } from './task-vocabulary';
import type { TaskToolPrompts } from './tool-prompts';

/**
 * The dialect-neutral view of a task that the tasks service returns. The edge renders it
 * into AgentRelay, A2A v0.3 or A2A v1.0 shapes (docs/dialects.md).
 */
export {
  ARTIFACT_TYPES,
  HOLD_OUTCOMES,
  INTENTS,
  isTerminalState,
  OPEN_STATES,
  TASK_STATES,
  TERMINAL_STATES,
  TRANSITIONS,
  TYPED_ARTIFACT_FIELDS,
  type ArtifactField,
  type ArtifactFieldKind,
  type ArtifactType,
  type HoldOutcome,
  type Intent,
  type TaskState,
  type Transition,
  type TypedArtifact,
} from './task-vocabulary';
export interface ParticipantRef {
  id: string;
  handle: string;
  name: string;
  role: string | null;
}

const metadataSchema = z.record(z.string(), z.unknown()).meta({ description: 'Free-form metadata (A2A `metadata`).' });

/** A message part, neutral between the A2A versions (the one description: the type and the event JSON Schemas come from it). */
export const partViewSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('text'),
      text: z.string(),
      media_type: z.string().optional(),
      filename: z.string().optional(),
      metadata: metadataSchema.optional(),
    }),
    z.object({
      kind: z.literal('data'),
      data: z.unknown().meta({ description: 'Any JSON value.' }),
      media_type: z.string().optional(),
      filename: z.string().optional(),
      metadata: metadataSchema.optional(),
    }),
    z.object({
      kind: z.literal('file'),
      file: z.object({
        name: z.string().optional(),
        mime_type: z.string().optional(),
        bytes: z.string().optional().meta({ description: 'The file itself, base64.' }),
        uri: z.string().optional(),
      }),
      metadata: metadataSchema.optional(),
    }),
  ])
  .meta({ description: 'A message or artifact part: text, structured data or a file (inline bytes or a URI).' });
export type PartView = z.infer<typeof partViewSchema>;

export interface MessageView {
  /** The client's messageId, or a UUID the relay made. */
  id: string;
  sequence_no: number;
  /** Handle of the author. */
  from: string;
  /** Whether the author is the task's sender (A2A role user) or recipient (role agent). */
  author: 'sender' | 'recipient';
  /** The first text part. */
  body: string;
  parts: PartView[];
  /** Travels as the A2A message's metadata. */
  payload: Record<string, unknown>;
  created_at: string;
}

/**
 * An artifact. The AgentRelay typed artifacts (`type` set, fields in `fields`) and standard A2A
 * artifacts (`parts`) share this shape.
 */
export const artifactViewSchema = z.object({
  artifact_id: z.string(),
  type: z.enum(ARTIFACT_TYPES).nullable().meta({ description: 'The AgentRelay artifact type, or null for a standard A2A artifact.' }),
  /** The typed artifact's own fields, e.g. {path, diff} for a file_diff. */
  fields: z.record(z.string(), z.unknown()).meta({ description: "The typed artifact's own fields, e.g. {path, diff} for a file_diff." }),
  name: z.string().nullable(),
  description: z.string().nullable(),
  parts: z.array(partViewSchema),
  metadata: metadataSchema,
});
export type ArtifactView = z.infer<typeof artifactViewSchema>;

export interface ProposedAction {
  description: string;
  target_files: string[];
  rationale: string;
  suggested_diff?: string | null;
}

/** The hold of a handoff a rule of its recipient's trust policy kept for a person's approval. */
export interface TaskHold {
  /** The name of the rule that held it. */
  rule: string;
  /** Why, as the sender is told. */
  reason: string;
  expires_at: string;
  four_eyes: boolean;
  outcome: HoldOutcome;
  decided_at: string | null;
  /** The approver's comment (on a deny, also the task's `reason`). */
  comment: string | null;
}

export interface TaskView {
  id: string;
  context_id: string;
  state: TaskState;
  intent: Intent;
  summary: string;
  sender: ParticipantRef;
  recipient: ParticipantRef;
  proposed_action: ProposedAction | null;
  artifacts: ArtifactView[];
  /** Oldest first; possibly only the most recent ones when a history length was asked for. */
  messages: MessageView[];
  message_count: number;
  /** The messages of the other party the caller has not read yet. */
  unread_messages: number;
  result_summary: string | null;
  reason: string | null;
  metadata: Record<string, unknown>;
  accepted_at: string | null;
  completed_at: string | null;
  cancelled_at: string | null;
  failed_at: string | null;
  rejected_at: string | null;
  created_at: string;
  updated_at: string;
  /** When the current state was entered. */
  status_timestamp: string;
  /** Set on a handoff that was held for approval (its recipient sees it only once approved). */
  hold: TaskHold | null;
  /** Set on a handoff whose tool prompts people answer (a tool-prompt rule of its recipient's trust policy matched). */
  tool_prompts: TaskToolPrompts | null;
  /** Where the handoff sits in its chain (docs/chains.md). */
  chain: TaskChain;
}

/** A handoff's place in its chain: the handoff it serves, the chain's root, and how deep it sits (the root: 0). */
export interface TaskChain {
  /** The handoff this one was made for, or null for a root. */
  parent_task_id: string | null;
  /** The first handoff of the chain (the task itself for a root). */
  root_task_id: string;
  depth: number;
}
