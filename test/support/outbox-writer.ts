import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { taskEventSubject, TASK_EVENT_SCHEMA_VERSION, type TaskEvent, type TaskEventType, type TaskState } from '@app/contracts';
import { testDatabaseUrl } from './test-env';

const STATE_OF: Record<TaskEventType, TaskState> = {
  held: 'held',
  created: 'pending',
  message_appended: 'accepted',
  artifact_updated: 'accepted',
  accepted: 'accepted',
  input_required: 'input_required',
  completed: 'completed',
  failed: 'failed',
  rejected: 'rejected',
  canceled: 'cancelled',
};

/** A task event as the tasks service writes it to its outbox. */
export function taskEvent(
  taskId: string,
  type: TaskEventType,
  options: { sender?: string; recipient?: string; sequenceNo?: number | null; author?: string; body?: string } = {},
): TaskEvent {
  const sender = options.sender ?? 'alice@acme';
  const recipient = options.recipient ?? 'bob@acme';
  const sequenceNo = options.sequenceNo ?? null;
  const author = options.author ?? (type === 'created' ? sender : undefined);
  return {
    schema_version: TASK_EVENT_SCHEMA_VERSION,
    event_id: randomUUID(),
    type,
    task_id: taskId,
    context_id: `ctx-${taskId}`,
    sender,
    recipient,
    state: STATE_OF[type],
    sequence_no: sequenceNo,
    occurred_at: new Date().toISOString(),
    task: {
      intent: 'inform',
      summary: 'Fix the flaky test',
      message_count: sequenceNo ?? 1,
      latest_message: author ? { id: randomUUID(), sequence_no: sequenceNo ?? 1, from: author, body: options.body ?? 'Please look at it' } : null,
      result_summary: type === 'completed' ? 'Fixed and green' : null,
      reason: null,
    },
  };
}

/** `count` new handoffs (`created` events) from `sender` to `recipient`, each in a task of its own. */
export function newTaskEvents(sender: string, recipient: string, count: number): TaskEvent[] {
  return Array.from({ length: count }, () => taskEvent(`task-${randomUUID()}`, 'created', { sender, recipient, sequenceNo: 1 }));
}

/**
 * Writes task events to the tasks service's outbox as its handoff code does (one transaction), so
 * tests can drive the event chain directly.
 */
export class OutboxWriter {
  private constructor(private readonly client: pg.Client) {}

  /** Call after the tasks service started (its migrations create the outbox table). */
  static async connect(): Promise<OutboxWriter> {
    const client = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    return new OutboxWriter(client);
  }

  get db(): pg.Client {
    return this.client;
  }

  async write(events: TaskEvent[]): Promise<void> {
    await this.client.query('BEGIN');
    try {
      for (const event of events) {
        await this.client.query('INSERT INTO "tasks"."outbox_events" (id, subject, type, task_id, payload) VALUES ($1, $2, $3, $4, $5)', [
          event.event_id,
          taskEventSubject(event.type),
          event.type,
          event.task_id,
          JSON.stringify(event),
        ]);
      }
      await this.client.query('COMMIT');
    } catch (error) {
      await this.client.query('ROLLBACK');
      throw error;
    }
  }

  async unpublishedCount(): Promise<number> {
    const result = await this.client.query('SELECT count(*)::int AS n FROM "tasks"."outbox_events" WHERE published_at IS NULL');
    return result.rows[0].n as number;
  }

  async end(): Promise<void> {
    await this.client.end();
  }
}
