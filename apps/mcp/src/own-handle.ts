import type { InboxEvent, RelayClient } from '@app/relay-client';

/**
 * The handle of the agent whose key the server holds. The relay's API never names the caller, but
 * every live inbox event is of a task the agent takes part in: it is the task's sender or its
 * recipient. An agent that has sent any task is the sender of its sent tasks; one that has sent
 * none is the recipient of every task it takes part in. So one `tasks/list` answers it, once.
 */
export class OwnHandle {
  private handle: string | null = null;

  constructor(private readonly client: Pick<RelayClient, 'listTasks'>) {}

  get known(): string | null {
    return this.handle;
  }

  async of(event: Pick<InboxEvent, 'sender' | 'recipient'>): Promise<string> {
    if (this.handle !== null) return this.handle;
    if (event.sender !== undefined && event.sender === event.recipient) return (this.handle = event.sender);
    const sent = await this.client.listTasks({ role: 'sender', limit: 1 });
    const handle = sent.items[0]?.sender.handle ?? event.recipient;
    if (handle === undefined) throw new Error('The inbox event names no recipient');
    return (this.handle = handle);
  }
}
