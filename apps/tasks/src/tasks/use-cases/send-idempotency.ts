import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { RelayError, type SendReply, type SendRequest } from '@app/contracts';
import { IdempotencyKeyEntity, type IdempotencyKey } from '../store/idempotency-key.entity';
import { TaskRepository } from '../store/task-repository';
import { toMessageRef } from '../store/task-rows';

/** A send's keys: the client's message id and its idempotency key, each a scope of its own. */
export function idempotencyKeys(request: SendRequest): IdempotencyKey[] {
  const keys: IdempotencyKey[] = [];
  if (request.message.message_id !== undefined) keys.push({ scope: 'message_id', key: request.message.message_id, field: 'message.message_id' });
  if (request.idempotency_key !== undefined) keys.push({ scope: 'client_key', key: request.idempotency_key, field: 'idempotency_key' });
  return keys;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What makes two sends "the same": everything but the keys themselves and the reply shape. Only
 * a send with a key is ever compared with another, so a send without one gets no hash.
 */
export function sendRequestHash(request: SendRequest): string {
  if (idempotencyKeys(request).length === 0) return '';
  const content = {
    task_id: request.task_id ?? null,
    recipient: request.recipient?.id ?? null,
    context_id: request.context_id ?? null,
    parts: request.message.parts,
    payload: request.message.payload ?? {},
    intent: request.intent ?? null,
    proposed_action: request.proposed_action ?? null,
    artifacts: request.artifacts ?? [],
    metadata: request.metadata ?? {},
  };
  return createHash('sha256').update(stableJson(content)).digest('hex');
}

/** Retried sends: the first send's answer again for the same keys and content, an error for other content. */
@Injectable()
export class SendIdempotency {
  constructor(@Inject(TaskRepository) private readonly repository: TaskRepository) {}

  async replay(manager: EntityManager, request: SendRequest, hash: string): Promise<SendReply | undefined> {
    for (const { scope, key, field } of idempotencyKeys(request)) {
      const row = await manager.findOneBy(IdempotencyKeyEntity, { senderId: request.caller.id, scope, key });
      if (!row) continue;
      if (row.requestHash !== hash) {
        throw new RelayError('duplicate_idempotency_key', 'This idempotency key was used with a different payload', { field, key });
      }
      const task = await this.repository.loadTask(manager, row.taskId);
      const message = await this.repository.messageAt(manager, row.taskId, row.sequenceNo);
      const unread = await this.repository.unreadCount(manager, task.id, request.caller.id);
      return {
        task: await this.repository.view(manager, task, request.history_length, unread),
        message: toMessageRef(message),
        created: row.createdTask,
        idempotent_replay: true,
      };
    }
    return undefined;
  }
}
