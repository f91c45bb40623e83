import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { AgentEntity } from './agent.entity';

/** An agent's API key, stored only as its SHA-256 hash and a short display prefix. */
@Entity({ name: 'api_keys' })
@Unique('api_keys_agent_prefix_key', ['agentId', 'prefix'])
@Index('api_keys_agent_idx', ['agentId'])
@Check('api_keys_hash_format', `"key_hash" ~ '^[0-9a-f]{64}$'`)
@Check('api_keys_prefix_format', `"prefix" ~ '^ah_live_[A-Z2-7]{8}$'`)
@Check('api_keys_revoked_after_created', `"revoked_at" IS NULL OR "revoked_at" >= "created_at"`)
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  agentId: string;

  @ManyToOne(() => AgentEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'api_keys_agent_fk' })
  agent?: AgentEntity;

  /** Lowercase hex SHA-256 of the whole key. */
  @Column({ type: 'char', length: 64, unique: true })
  keyHash: string;

  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
