import { isTerminalState, type AdminTaskRow, type TaskEvent, type TaskState } from '@app/contracts';

/** One open handoff in an agent's table. */
export interface OpenHandoff {
  task_id: string;
  sender: string;
  state: TaskState;
  summary: string;
  /** When it last changed. */
  updated_at: string;
}

/**
 * The open handoffs of every agent, as their recipient: what each agent has on its plate. Built from
 * a snapshot of the open tasks and kept current by the task events that follow it.
 */
export class OpenHandoffsTable {
  private readonly byRecipient = new Map<string, Map<string, OpenHandoff>>();
  private readonly recipientOf = new Map<string, string>();

  /** A task of the snapshot (the admin API's list row). */
  fromSnapshot(row: AdminTaskRow): void {
    this.put(row.recipient.handle, { task_id: row.id, sender: row.sender.handle, state: row.state, summary: row.summary, updated_at: row.updated_at });
  }

  /** A task event: the task is in its recipient's table while it is open, and leaves it when it ends. */
  apply(event: TaskEvent): void {
    if (isTerminalState(event.state)) {
      this.remove(event.task_id);
      return;
    }
    this.put(event.recipient, { task_id: event.task_id, sender: event.sender, state: event.state, summary: event.task.summary, updated_at: event.occurred_at });
  }

  /** Every agent with open handoffs, each list oldest change first. */
  toJSON(): Record<string, OpenHandoff[]> {
    const table: Record<string, OpenHandoff[]> = {};
    for (const [recipient, tasks] of [...this.byRecipient].sort(([a], [b]) => a.localeCompare(b))) {
      table[recipient] = [...tasks.values()].sort((a, b) => a.updated_at.localeCompare(b.updated_at) || a.task_id.localeCompare(b.task_id));
    }
    return table;
  }

  private put(recipient: string, handoff: OpenHandoff): void {
    let tasks = this.byRecipient.get(recipient);
    if (!tasks) this.byRecipient.set(recipient, (tasks = new Map()));
    tasks.set(handoff.task_id, handoff);
    this.recipientOf.set(handoff.task_id, recipient);
  }

  private remove(taskId: string): void {
    const recipient = this.recipientOf.get(taskId);
    if (recipient === undefined) return;
    this.recipientOf.delete(taskId);
    const tasks = this.byRecipient.get(recipient)!;
    tasks.delete(taskId);
    if (tasks.size === 0) this.byRecipient.delete(recipient);
  }
}
