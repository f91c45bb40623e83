import type { TaskEventMessage } from '@app/contracts';

/**
 * What an `upstream` delivery does at the upstream agent's A2A server: `create`, the handoff's first
 * message as `SendMessage` (a new upstream task); `reply`, a later message of the sender as
 * `SendMessage` on the upstream task; `cancel`, the sender's cancel as `CancelTask`.
 */
export type UpstreamAction = 'create' | 'reply' | 'cancel';

/** What an `upstream` delivery carries (rows written before `action` existed are a `create`). */
export interface UpstreamDeliveryBody {
  action?: UpstreamAction;
  task_id: string;
  context_id: string;
  sender: string;
  recipient: string;
  /** The message sent (`create`, `reply`); on a `cancel`, the task's latest message or null. */
  message: TaskEventMessage | null;
}
