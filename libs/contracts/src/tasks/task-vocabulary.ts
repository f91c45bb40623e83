/**
 * The words of a task, as plain tables (no decorators, no schema library): its states, intents,
 * transitions, hold outcomes and the typed artifacts with their fields. The tasks service checks
 * against them; the CLI, the MCP server, the relay client and the console read the same tables
 * through `@app/contracts/model`.
 */
export const TASK_STATES = ['held', 'pending', 'accepted', 'input_required', 'completed', 'cancelled', 'failed', 'rejected'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** Tasks still open: waiting to be accepted, being worked on, or waiting for the sender's input. */
export const OPEN_STATES: readonly TaskState[] = ['pending', 'accepted', 'input_required'];
export const TERMINAL_STATES: readonly TaskState[] = ['completed', 'cancelled', 'failed', 'rejected'];

export function isTerminalState(state: TaskState): boolean {
  return TERMINAL_STATES.includes(state);
}

export const INTENTS = ['inform', 'ask_question', 'propose_action'] as const;
export type Intent = (typeof INTENTS)[number];

export const TRANSITIONS = ['accept', 'complete', 'cancel', 'decline', 'fail', 'request_input'] as const;
export type Transition = (typeof TRANSITIONS)[number];

/** How a hold ended (or `held` while it waits): docs/decisions/0024-held-handoffs.md. */
export const HOLD_OUTCOMES = ['held', 'approved', 'denied', 'expired', 'cancelled'] as const;
export type HoldOutcome = (typeof HOLD_OUTCOMES)[number];

/** What a typed artifact's field holds: a non-empty string, an http(s) URL, a non-negative integer, a list of strings. */
export type ArtifactFieldKind = 'string' | 'url' | 'integer' | 'string[]';

export interface ArtifactField {
  kind: ArtifactFieldKind;
  required: boolean;
  /** What it is, as tools describe it to a model. */
  about?: string;
}

const DESCRIPTION: ArtifactField = { kind: 'string', required: false, about: 'What the artifact is for' };

/** The fields of each typed artifact (seed 000); anything else in `fields` is refused. */
export const TYPED_ARTIFACT_FIELDS = {
  file_diff: { path: { kind: 'string', required: true }, diff: { kind: 'string', required: true, about: 'Unified diff' }, description: DESCRIPTION },
  file_ref: {
    path: { kind: 'string', required: true },
    line_start: { kind: 'integer', required: false },
    line_end: { kind: 'integer', required: false },
    ref: { kind: 'string', required: false, about: 'Commit, branch or tag' },
    description: DESCRIPTION,
  },
  test_command: {
    command: { kind: 'string', required: true, about: 'e.g. npm test -- users' },
    cwd: { kind: 'string', required: false },
    expected: { kind: 'string', required: false, about: 'What passing looks like' },
    description: DESCRIPTION,
  },
  api_contract: {
    name: { kind: 'string', required: true },
    spec: { kind: 'string', required: true, about: 'The contract itself, e.g. an OpenAPI excerpt' },
    format: { kind: 'string', required: false, about: 'e.g. openapi, graphql, typescript' },
    endpoints: { kind: 'string[]', required: false },
    description: DESCRIPTION,
  },
  link: { url: { kind: 'url', required: true }, title: { kind: 'string', required: false }, description: DESCRIPTION },
} as const satisfies Record<string, Record<string, ArtifactField>>;

export type ArtifactType = keyof typeof TYPED_ARTIFACT_FIELDS;
export const ARTIFACT_TYPES = Object.keys(TYPED_ARTIFACT_FIELDS) as [ArtifactType, ...ArtifactType[]];

type FieldValue<Kind extends ArtifactFieldKind> = Kind extends 'integer' ? number : Kind extends 'string[]' ? string[] : string;
type Fields<Table> = {
  [Name in keyof Table as Table[Name] extends { required: true } ? Name : never]: Table[Name] extends ArtifactField ? FieldValue<Table[Name]['kind']> : never;
} & {
  [Name in keyof Table as Table[Name] extends { required: true } ? never : Name]?: Table[Name] extends ArtifactField ? FieldValue<Table[Name]['kind']> : never;
};

/** A typed artifact as a client writes it: `{type: 'file_diff', path, diff, description?}`, … (its fields beside its type). */
export type TypedArtifact = { [Type in ArtifactType]: { type: Type } & Fields<(typeof TYPED_ARTIFACT_FIELDS)[Type]> }[ArtifactType];
