import { Controller, Module, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { RelayNatsServer } from '@app/messaging';
import { eventually } from './support/eventually';
import { testNatsUrl, uniqueSubjectPrefix } from './support/test-env';

const SLOW_SUBJECT = 'relay.tasks.v1.slow_echo';

@Controller()
class SlowEchoController {
  @MessagePattern(SLOW_SUBJECT)
  async echo(@Payload() data: { text: string; delayMs: number }): Promise<{ echoed: string }> {
    await new Promise((resolve) => setTimeout(resolve, data.delayMs));
    return { echoed: data.text };
  }
}

@Module({ controllers: [SlowEchoController] })
class SlowEchoModule {}

describe('graceful shutdown of a NATS service', () => {
  const prefix = uniqueSubjectPrefix();
  let app: INestMicroservice;
  let server: RelayNatsServer;
  let caller: NatsConnection;

  beforeAll(async () => {
    server = new RelayNatsServer(prefix, { servers: testNatsUrl(), queue: 'tasks' });
    app = await NestFactory.createMicroservice(SlowEchoModule, {
      strategy: server,
      logger: false,
    });
    await app.listen();
    caller = await connect({ servers: testNatsUrl() });
  });

  afterAll(async () => {
    await caller.close();
  });

  it('answers the request in flight when it is closed, then takes no more', async () => {
    const packet = (text: string) => JSON.stringify({ pattern: SLOW_SUBJECT, data: { text, delayMs: 400 }, id: text });
    const inFlight = caller.request(`${prefix}.${SLOW_SUBJECT}`, packet('in-flight'), { timeout: 5000 });
    await eventually(() => expect(server.inFlightRequests).toBe(1));
    const closing = app.close();

    const reply = await inFlight;
    expect(reply.json()).toMatchObject({ response: { echoed: 'in-flight' }, isDisposed: true });
    await closing;

    await expect(caller.request(`${prefix}.${SLOW_SUBJECT}`, packet('after-close'), { timeout: 1000 })).rejects.toThrow(/no responders|503/i);
  });
});
