import { Check, Column, Entity, JoinColumn, OneToOne, PrimaryColumn, UpdateDateColumn, type Relation } from 'typeorm';
import type { ChainPolicy, HoldRule, ToolPromptRule } from '@app/contracts';
import { AgentEntity } from '../agents/agent.entity';

/** A recipient's admission policy: `allow` and `block` lists of handles or `*@org` patterns, the rules that hold a handoff for approval and those that give its tool prompts to people. */
@Entity({ name: 'trust_policies' })
@Check('trust_policies_allow_no_nulls', `array_position("allow", NULL) IS NULL`)
@Check('trust_policies_block_no_nulls', `array_position("block", NULL) IS NULL`)
@Check('trust_policies_hold_array', `jsonb_typeof("hold") = 'array'`)
@Check('trust_policies_tool_prompts_array', `jsonb_typeof("tool_prompts") = 'array'`)
@Check('trust_policies_chain_object', `jsonb_typeof("chain") = 'object'`)
export class TrustPolicyEntity {
  @PrimaryColumn({ type: 'uuid' })
  agentId: string;

  @OneToOne(() => AgentEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'agent_id', foreignKeyConstraintName: 'trust_policies_agent_fk' })
  agent?: Relation<AgentEntity>;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  allow: string[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  block: string[];

  /** Checked against HOLD_RULES_SCHEMA before it is written. */
  @Column({ type: 'jsonb', default: () => "'[]'" })
  hold: HoldRule[];

  /** Checked against TOOL_PROMPT_RULES_SCHEMA before it is written. */
  @Column({ type: 'jsonb', default: () => "'[]'" })
  toolPrompts: ToolPromptRule[];

  /** The recipient's own chain bounds (docs/chains.md); checked against CHAIN_POLICY_SCHEMA before it is written. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  chain: ChainPolicy;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
