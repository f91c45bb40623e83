import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { prefixedSubject, type TaskEvent } from '@app/contracts';
import { eventStreamName, openJetStream, type JetStreamContext } from '@app/messaging';
import { testNatsUrl } from './test-env';

export interface CollectedEvent {
  subject: string;
  msgId: string | undefined;
  seq: number;
  event: TaskEvent;
}

/**
 * An internal consumer of the relay's events: an ordered JetStream consumer on
 * `<prefix>.relay.events.task.>` that records every event it sees, in stream order.
 */
export class EventCollector {
  readonly events: CollectedEvent[] = [];
  private messages: ConsumerMessages | null = null;
  private pump: Promise<void> | null = null;

  private constructor(private readonly context: JetStreamContext) {}

  static async start(subjectPrefix: string, filter = 'relay.events.task.>'): Promise<EventCollector> {
    const context = await openJetStream({ url: testNatsUrl(), name: 'test-event-collector' });
    const collector = new EventCollector(context);
    const consumer = await context.js.consumers.get(eventStreamName(subjectPrefix), {
      filter_subjects: prefixedSubject(subjectPrefix, filter),
      deliver_policy: DeliverPolicy.All,
    });
    collector.messages = await consumer.consume();
    collector.pump = (async () => {
      for await (const message of collector.messages!) {
        collector.events.push({
          subject: message.subject,
          msgId: message.headers?.get('Nats-Msg-Id') || undefined,
          seq: message.seq,
          event: message.json<TaskEvent>(),
        });
      }
    })();
    return collector;
  }

  ofTask(taskId: string): CollectedEvent[] {
    return this.events.filter((collected) => collected.event.task_id === taskId);
  }

  async stop(): Promise<void> {
    await this.messages?.close();
    await this.pump?.catch(() => undefined);
    await this.context.connection.drain();
  }
}
