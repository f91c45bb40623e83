import { Inject, Injectable } from '@nestjs/common';
import { DIRECTORY_SUBJECTS, RelayError, type AgentRecord } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';

/** The notifier's questions to the directory: looks up an agent it has no target for yet. */
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
}
