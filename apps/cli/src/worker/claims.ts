import type { TaskMessage, Task } from '@app/relay-client';

/**
 * How workers on one handle share its tasks. A worker marks its messages in the task with a
 * payload `{agentrelay_worker: {kind, session_id, lease_seconds}}`:
 *
 * - `run`: the worker took the task and runs the command (the accept's message, or the message that
 *   resumes a task after the sender's answer); `lease_seconds` bounds how long that run can take;
 * - `question`: the run ended asking the sender (request_input);
 * - `progress`: a progress update (not a claim).
 *
 * The newest `run` or `question` marker of the recipient tells where the task stands.
 */
export const WORKER_PAYLOAD_KEY = 'agentrelay_worker';

export type MarkerKind = 'run' | 'question' | 'progress';

export interface WorkerMarker {
  kind: MarkerKind;
  session_id: string;
  lease_seconds?: number;
}

/** Slack on a lease for relay calls at the end of a run and clocks a little apart. */
export const LEASE_SLACK_SECONDS = 120;

export function marker(kind: MarkerKind, sessionId: string, leaseSeconds?: number): Record<string, unknown> {
  return { [WORKER_PAYLOAD_KEY]: { kind, session_id: sessionId, ...(leaseSeconds !== undefined ? { lease_seconds: leaseSeconds } : {}) } };
}

export function markerOf(message: TaskMessage, recipient: string): WorkerMarker | null {
  if (message.from !== recipient) return null;
  const value = (message.payload ?? {})[WORKER_PAYLOAD_KEY] as Partial<WorkerMarker> | undefined;
  if (!value || typeof value !== 'object' || typeof value.session_id !== 'string') return null;
  if (value.kind !== 'run' && value.kind !== 'question' && value.kind !== 'progress') return null;
  return {
    kind: value.kind,
    session_id: value.session_id,
    ...(typeof value.lease_seconds === 'number' ? { lease_seconds: value.lease_seconds } : {}),
  };
}

export type Standing =
  /** No worker ever took it (a person or another tool accepted it): left alone. */
  | { kind: 'not_a_worker_task' }
  /** A worker's run holds it (or held it until it died). */
  | { kind: 'run'; claim: WorkerMarker; message: TaskMessage }
  /** A run asked; the sender answered (the task is accepted again): the next run may start. */
  | { kind: 'answered'; question: TaskMessage; runs: number }
  /** Waiting for the sender's answer, or finished: nothing to do. */
  | { kind: 'idle' };

/** Where an open task stands for the workers of its recipient, from all its messages. */
export function standingOf(task: Pick<Task, 'status' | 'recipient' | 'messages'>): Standing {
  let runs = 0;
  let last: { claim: WorkerMarker; message: TaskMessage } | null = null;
  for (const message of task.messages) {
    const claim = markerOf(message, task.recipient);
    if (!claim || claim.kind === 'progress') continue;
    if (claim.kind === 'run') runs += 1;
    last = { claim, message };
  }
  if (!last) return { kind: 'not_a_worker_task' };
  if (task.status.state !== 'accepted') return { kind: 'idle' };
  if (last.claim.kind === 'run') return { kind: 'run', ...last };
  return { kind: 'answered', question: last.message, runs };
}

export interface Liveness {
  /** This worker's session id. */
  sessionId: string;
  /** This machine's host name, as it appears in default session ids. */
  host: string;
  /** Whether this worker holds the task right now. */
  holds(taskId: string): boolean;
  /** Whether a process with that pid runs on this machine. */
  processExists(pid: number): boolean;
  now(): number;
}

/** The default session id of a worker process: `worker:<host>:<pid>`. */
export function defaultSessionId(host: string, pid: number): string {
  return `worker:${host}:${pid}`;
}

/**
 * Whether the run that claimed a task is gone, so that its task would stay accepted forever:
 * - the claim is this worker's own session, which does not hold it (an earlier life of a worker
 *   with the same `AGENTRELAY_SESSION_ID`);
 * - the claim names a worker process of this machine (`worker:<host>:<pid>`) that no longer runs;
 * - or the task has not changed for longer than the claim's lease (its command timeout, the kill's
 *   grace and a slack): a live worker would have ended the run by then.
 */
export function runIsAbandoned(taskId: string, claim: WorkerMarker, updatedAt: string, self: Liveness): boolean {
  if (claim.session_id === self.sessionId) return !self.holds(taskId);
  const local = /^worker:(.+):(\d+)$/.exec(claim.session_id);
  if (local && local[1] === self.host && !self.processExists(Number(local[2]))) return true;
  const leaseMs = (claim.lease_seconds ?? 0) * 1000;
  return self.now() - Date.parse(updatedAt) > leaseMs;
}
