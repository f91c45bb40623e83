import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DIRECTORY_SUBJECTS, RelayError, type AgentRecord } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { NotifierConfig } from '../notifier.config';

/** The notifier's request client to the directory: looks up an agent it has no target for yet. */
@Injectable()
export class DirectoryClient implements OnModuleInit, OnApplicationShutdown {
  private client?: NatsRpcClient;

  constructor(@Inject(NotifierConfig) private readonly config: NotifierConfig) {}

  async onModuleInit(): Promise<void> {
    this.client = await NatsRpcClient.connect({
      url: this.config.NATS_URL,
      subjectPrefix: this.config.NATS_SUBJECT_PREFIX,
      defaultTimeoutMs: this.config.NATS_REQUEST_TIMEOUT_MS,
      name: 'agentrelay-notifier-rpc',
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client?.drain().catch(() => undefined);
  }

  /**
   * The agent's current record (with its webhook URLs), or null when the directory says there is
   * no such agent. Throws when the directory does not answer: the caller retries later.
   */
  async agent(handle: string): Promise<AgentRecord | null> {
    if (!this.client) throw new RelayError('service_unavailable', 'The notifier is not connected to NATS', { service: 'directory' });
    try {
      return await this.client.request(DIRECTORY_SUBJECTS.getAgent, { handle });
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'agent_not_found') return null;
      throw error;
    }
  }
}
