import { DeploymentEntity } from '@app/database';
import { ArtifactEntity } from '../tasks/store/artifact.entity';
import { AuditLogEntity } from '../tasks/store/audit-log.entity';
import { IdempotencyKeyEntity } from '../tasks/store/idempotency-key.entity';
import { MessageEntity } from '../tasks/store/message.entity';
import { OrgStoredBytesEntity } from '../tasks/store/org-stored-bytes.entity';
import { ReadCursorEntity } from '../tasks/store/read-cursor.entity';
import { TaskEntity } from '../tasks/store/task.entity';
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
  OrgStoredBytesEntity,
];
