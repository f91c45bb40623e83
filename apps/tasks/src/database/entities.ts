import { DeploymentEntity } from '@app/database';
import { ArtifactEntity } from '../tasks/artifact.entity';
import { AuditLogEntity } from '../tasks/audit-log.entity';
import { IdempotencyKeyEntity } from '../tasks/idempotency-key.entity';
import { MessageEntity } from '../tasks/message.entity';
import { ReadCursorEntity } from '../tasks/read-cursor.entity';
import { TaskEntity } from '../tasks/task.entity';
import { OutboxEventEntity } from '../outbox/outbox-event.entity';
import { PushConfigEntity } from '../push-configs/push-config.entity';
import { OutboxHorizonEntity } from '../retention/outbox-horizon.entity';

/** Every entity of the tasks schema, and the deployment row every service shares. */
export const TASKS_ENTITIES: Array<new () => object> = [
  DeploymentEntity,
  TaskEntity,
  MessageEntity,
  ArtifactEntity,
  IdempotencyKeyEntity,
  ReadCursorEntity,
  AuditLogEntity,
  OutboxEventEntity,
  PushConfigEntity,
  OutboxHorizonEntity,
];
