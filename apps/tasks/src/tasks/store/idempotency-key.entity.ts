import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { AGENT_LIMITS, TASK_LIMITS } from '@app/contracts';
import type { MessageEntity } from './message.entity';

/** A send's key: the client's message id or its idempotency key, each a scope of its own. */
export type IdempotencyScope = 'message_id' | 'client_key';

export interface IdempotencyKey {
  scope: IdempotencyScope;
  key: string;
  /** The request field the key came from, named in errors. */
  field: string;
}

/** A sender's idempotency key (a message id or a client key), pointing at the message it created. */
@Entity({ name: 'idempotency_keys' })
@Index('idempotency_keys_created_at_idx', ['createdAt'])
@Check('idempotency_keys_scope_known', `"scope" IN ('message_id', 'client_key')`)
@Check('idempotency_keys_key_length', `char_length("key") BETWEEN 1 AND ${TASK_LIMITS.idempotencyKeyChars}`)
export class IdempotencyKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: AGENT_LIMITS.idChars, primaryKeyConstraintName: 'idempotency_keys_pkey' })
  senderId: string;

  @PrimaryColumn({ type: 'varchar', length: 20, primaryKeyConstraintName: 'idempotency_keys_pkey' })
  scope: IdempotencyScope;

  @PrimaryColumn({ type: 'varchar', length: TASK_LIMITS.idempotencyKeyChars, primaryKeyConstraintName: 'idempotency_keys_pkey' })
  key: string;

  /** Lowercase hex SHA-256 of the request the key first came with. */
  @Column({ type: 'char', length: 64 })
  requestHash: string;

  @Column({ type: 'char', length: 26 })
  taskId: string;

  @Column({ type: 'integer' })
  sequenceNo: number;

  @ManyToOne('MessageEntity', { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'task_id', referencedColumnName: 'taskId', foreignKeyConstraintName: 'idempotency_keys_message_fkey' },
    { name: 'sequence_no', referencedColumnName: 'sequenceNo', foreignKeyConstraintName: 'idempotency_keys_message_fkey' },
  ])
  message?: Relation<MessageEntity>;

  @Column({ type: 'boolean' })
  createdTask: boolean;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
