import { ArtifactEntity } from '../handoffs/artifact.entity';
import { AuditLogEntity } from '../handoffs/audit-log.entity';
import { IdempotencyKeyEntity } from '../handoffs/idempotency-key.entity';
import { MessageEntity } from '../handoffs/message.entity';
import { ReadCursorEntity } from '../handoffs/read-cursor.entity';
import { ThreadEntity } from '../handoffs/thread.entity';
import { OutboxEventEntity } from '../outbox/outbox-event.entity';
import { PushConfigEntity } from '../push-configs/push-config.entity';

/** Every entity of the tasks schema. */
export const TASKS_ENTITIES: Array<new () => object> = [
  ThreadEntity,
  MessageEntity,
  ArtifactEntity,
  IdempotencyKeyEntity,
  ReadCursorEntity,
  AuditLogEntity,
  OutboxEventEntity,
  PushConfigEntity,
];
