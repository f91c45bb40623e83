import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DIRECTORY_SUBJECTS, RelayError } from '@app/contracts';
import { natsInboxPrefix, NatsRpcClient } from '@app/messaging';
import { TasksConfig } from '../../tasks.config';

/** Asks the directory whether a task's recipient is an upstream agent (one the notifier delivers to and reports for). */
@Injectable()
export class UpstreamRecipients implements OnModuleInit, OnApplicationShutdown {
  private client?: NatsRpcClient;

  constructor(@Inject(TasksConfig) private readonly config: TasksConfig) {}

  async onModuleInit(): Promise<void> {
    this.client = await NatsRpcClient.connect({
      url: this.config.natsServers,
      inboxPrefix: natsInboxPrefix('tasks', this.config.NATS_SUBJECT_PREFIX),
      subjectPrefix: this.config.NATS_SUBJECT_PREFIX,
      defaultTimeoutMs: this.config.NATS_REQUEST_TIMEOUT_MS,
      name: 'agentrelay-tasks-rpc',
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client?.drain().catch(() => undefined);
  }

  /** Whether the agent with this handle and id is registered as an upstream agent. */
  async isUpstream(id: string, handle: string): Promise<boolean> {
    const client = this.client;
    if (!client) throw new RelayError('service_unavailable', 'The tasks service is not connected to NATS', { service: 'directory' });
    try {
      const agent = await client.request(DIRECTORY_SUBJECTS.getAgent, { handle });
      return agent.id === id && agent.upstream !== null;
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'agent_not_found') return false;
      throw error;
    }
  }
}
