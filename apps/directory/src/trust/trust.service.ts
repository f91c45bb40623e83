import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RelayError, type AdmitReply, type PutTrustRequest, type TrustPolicy } from '@app/contracts';
import { AgentsService } from '../agents/agents.service';
import { findRecipient } from '../agents/hot-lookups';
import { AgentEventsPublisher } from '../events/agent-events.publisher';
import { decideAdmission } from './admission';
import { TrustPolicyEntity } from './trust-policy.entity';
import { pgPoolOf } from '@app/database';

function uniqueEntries(entries: string[] | undefined): string[] {
  return [...new Set(entries ?? [])];
}

/** Trust policies (allow / block lists, hold and tool-prompt rules) and the admission decision made from them. */
@Injectable()
export class TrustService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(AgentsService) private readonly agents: AgentsService,
    @Inject(AgentEventsPublisher) private readonly events: AgentEventsPublisher,
  ) {}

  async admit(sender: string, recipient: string): Promise<AdmitReply> {
    const found = await findRecipient(pgPoolOf(this.dataSource), recipient, sender);
    if (!found || found.disabled) {
      throw new RelayError('recipient_not_found', `No agent with the handle ${recipient}`, { recipient });
    }
    const decision = decideAdmission(sender, recipient, found.policy);
    if (!decision.admitted) {
      const message =
        decision.policy === 'blocked' ? `${recipient} has blocked ${sender}` : `${recipient} does not admit senders outside its org unless allowed`;
      throw new RelayError('teammate_blocked', message, { policy: decision.policy, recipient });
    }
    return {
      recipient: found.profile,
      hold: found.hold,
      tool_prompts: found.toolPrompts,
      chain: found.chain,
      org_chain: found.orgChain,
      sender_org_open_handoffs: found.senderOrgOpenHandoffs,
    };
  }

  async get(handle: string): Promise<TrustPolicy> {
    const agent = await this.agents.findAgent(this.dataSource.manager, handle);
    const policy = await this.dataSource.getRepository(TrustPolicyEntity).findOne({ where: { agentId: agent.id } });
    return {
      handle: agent.handle,
      allow: policy?.allow ?? [],
      block: policy?.block ?? [],
      hold: policy?.hold ?? [],
      tool_prompts: policy?.toolPrompts ?? [],
      chain: policy?.chain ?? {},
      updated_at: policy?.updatedAt.toISOString() ?? null,
    };
  }

  /** Replaces the whole policy: a list left out is emptied. */
  async put(request: PutTrustRequest): Promise<TrustPolicy> {
    const policy = await this.dataSource.transaction(async (manager) => {
      const agent = await this.agents.findAgent(manager, request.handle);
      const repository = manager.getRepository(TrustPolicyEntity);
      await repository.upsert(
        {
          agentId: agent.id,
          allow: uniqueEntries(request.allow),
          block: uniqueEntries(request.block),
          hold: request.hold ?? [],
          toolPrompts: request.tool_prompts ?? [],
          chain: request.chain ?? {},
          updatedAt: new Date(),
        },
        ['agentId'],
      );
      const policy = await repository.findOneOrFail({ where: { agentId: agent.id } });
      return {
        handle: agent.handle,
        allow: policy.allow,
        block: policy.block,
        hold: policy.hold,
        tool_prompts: policy.toolPrompts,
        chain: policy.chain,
        updated_at: policy.updatedAt.toISOString(),
      };
    });
    this.events.announceChange({ kind: 'trust_changed', handle: policy.handle });
    return policy;
  }
}
