import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { DIRECTORY_CHANGES_SUBJECT, DIRECTORY_SUBJECTS, prefixedSubject, RelayError } from '@app/contracts';
import { natsInboxPrefix, NatsRpcClient, PERMISSION_PROBE_HEADER } from '@app/messaging';
import { TasksConfig } from '../../tasks.config';

/**
 * How long the directory's yes (this agent is an upstream agent) is reused: a report arrives for
 * every answer of an upstream agent, and the directory announces every change of an agent, which
 * drops the answers at once; the lifetime bounds a lost announcement, as on the edge.
 */
const UPSTREAM_ANSWER_MS = 1000;

/**
 * Asks the directory whether a task's recipient is an upstream agent (one the notifier delivers to
 * and reports for). A yes is kept for a second and dropped when the directory announces a change;
 * a no (or an error) is never kept, so an agent made upstream is one at once.
 */
@Injectable()
export class UpstreamRecipients implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(UpstreamRecipients.name);
  private client?: NatsRpcClient;
  private changes?: Subscription;
  /** Upstream agents by handle: their id, and until when the answer holds. */
  private readonly upstream = new Map<string, { id: string; until: number }>();

  constructor(@Inject(TasksConfig) private readonly config: TasksConfig) {}

  async onModuleInit(): Promise<void> {
    this.client = await NatsRpcClient.connect({
      url: this.config.natsServers,
      inboxPrefix: natsInboxPrefix('tasks', this.config.NATS_SUBJECT_PREFIX),
      subjectPrefix: this.config.NATS_SUBJECT_PREFIX,
      defaultTimeoutMs: this.config.NATS_REQUEST_TIMEOUT_MS,
      name: 'agentrelay-tasks-rpc',
    });
    this.changes = this.client.connection.subscribe(prefixedSubject(this.config.NATS_SUBJECT_PREFIX, DIRECTORY_CHANGES_SUBJECT), {
      callback: (error, message) => {
        if (error) this.logger.warn({ err: error }, 'directory change subscription failed');
        else if (message.headers?.get(PERMISSION_PROBE_HEADER)) return;
        this.upstream.clear();
      },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.changes?.unsubscribe();
    await this.client?.drain().catch(() => undefined);
  }

  /** Whether this process holds the directory's yes, still good, that the agent with this handle and id is an upstream agent (asks nothing). */
  knownUpstream(id: string, handle: string, now = Date.now()): boolean {
    const known = this.upstream.get(handle);
    return known !== undefined && known.until > now && known.id === id;
  }

  /** Whether the agent with this handle and id is registered as an upstream agent. */
  async isUpstream(id: string, handle: string, now = Date.now()): Promise<boolean> {
    const known = this.upstream.get(handle);
    if (known && known.until > now) return known.id === id;
    const client = this.client;
    if (!client) throw new RelayError('service_unavailable', 'The tasks service is not connected to NATS', { service: 'directory' });
    try {
      const agent = await client.request(DIRECTORY_SUBJECTS.getAgent, { handle });
      if (agent.upstream === null) {
        this.upstream.delete(handle);
        return false;
      }
      this.upstream.set(handle, { id: agent.id, until: now + UPSTREAM_ANSWER_MS });
      return agent.id === id;
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'agent_not_found') return false;
      throw error;
    }
  }
}
