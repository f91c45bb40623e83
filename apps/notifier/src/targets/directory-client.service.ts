import { Inject, Injectable } from '@nestjs/common';
import { DIRECTORY_SUBJECTS, ORG_SUBJECTS, RelayError, type AgentRecord, type OrgQuotas } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';

/** The notifier's questions to the directory: looks up an agent it has no target for yet, and an org's quotas. */
@Injectable()
export class DirectoryClient {
  constructor(@Inject(NatsRpcClient) private readonly rpc: NatsRpcClient) {}

  /**
   * The agent's current record (with its webhook URLs), or null when the directory says there is
   * no such agent. Throws when the directory does not answer: the caller retries later.
   */
  async agent(handle: string): Promise<AgentRecord | null> {
    try {
      return await this.rpc.request(DIRECTORY_SUBJECTS.getAgent, { handle });
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'agent_not_found') return null;
      throw error;
    }
  }

  /** The org's quotas (all null for an org with no row). Throws when the directory does not answer. */
  async orgQuotas(org: string): Promise<OrgQuotas> {
    return (await this.rpc.request(ORG_SUBJECTS.quotas, { name: org })).quotas;
  }
}
