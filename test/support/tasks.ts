import type { Client } from 'pg';
import type { RegisteredTestAgent } from './agents';
import { ok } from './json-rpc';

/** Creates a handoff from `sender` to `recipient` through `message/send` and returns its task id. */
export async function createTask(
  url: string,
  sender: RegisteredTestAgent,
  recipient: RegisteredTestAgent,
  text = 'Please review the /users refactor.',
  extra: Record<string, unknown> = {},
): Promise<string> {
  const result = await ok(url, sender.api_key, 'message/send', {
    task_id: null,
    recipient: recipient.agent.handle,
    message: { role: 'user', parts: [{ type: 'text', text }] },
    ...extra,
  });
  return result.task_id as string;
}

export function textMessage(text: string): { role: string; parts: Array<{ type: 'text'; text: string }> } {
  return { role: 'user', parts: [{ type: 'text', text }] };
}

/** How many tasks have `agent` as recipient, straight from the tasks schema (a refused send writes none). */
export async function countTasksReceivedBy(db: Client, agent: RegisteredTestAgent): Promise<number> {
  const result = await db.query<{ count: string }>(`SELECT count(*) AS count FROM "tasks"."tasks" WHERE "recipient_id" = $1`, [agent.agent.id]);
  return Number(result.rows[0].count);
}
