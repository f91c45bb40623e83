import { ServerNats, type NatsOptions } from '@nestjs/microservices';
import { prefixedSubject } from '@app/contracts';

type NatsServerOptions = NonNullable<NatsOptions['options']>;

interface NatsSubscriber {
  subscribe(subject: string, options: { queue?: string; callback: (error: Error | null, message: unknown) => unknown }): unknown;
}

/**
 * Nest's NATS transport, with every handler subscribed under a subject prefix and in the
 * service's queue group. Handlers are still looked up by their unprefixed pattern.
 */
export class RelayNatsServer extends ServerNats {
  constructor(
    private readonly subjectPrefix: string,
    private readonly serverOptions: NatsServerOptions,
  ) {
    super(serverOptions);
  }

  override bindEvents(client: NatsSubscriber): void {
    const queue = this.serverOptions.queue;
    for (const [pattern, handler] of this.messageHandlers.entries()) {
      const handlerQueue = (handler.extras?.queue as string | undefined) ?? queue;
      const subscription = client.subscribe(prefixedSubject(this.subjectPrefix, pattern), {
        queue: handlerQueue,
        callback: this.getMessageHandler(pattern).bind(this),
      });
      (this as unknown as { subscriptions: unknown[] }).subscriptions.push(subscription);
    }
  }
}
