import { jest } from '@jest/globals';
import { RelayNatsServer } from './relay-nats.server';
import { ServiceLoad } from './service-load';

function fakeConnection() {
  const unsubscribed: string[] = [];
  const subjects: string[] = [];
  const calls: string[] = [];
  return {
    subjects,
    unsubscribed,
    calls,
    connection: {
      subscribe: (subject: string) => {
        subjects.push(subject);
        return { unsubscribe: () => unsubscribed.push(subject) };
      },
      isClosed: () => false,
      flush: jest.fn(async () => void calls.push('flush')),
      drain: jest.fn(async () => void calls.push('drain')),
    },
  };
}

/** A request as nats.js hands it to a subscription callback, whose replies are recorded (or refused, as NATS refuses one past `max_payload`). */
function fakeRequest(pattern: string, respond: (data: string | Uint8Array) => boolean) {
  const packet = { pattern, data: {}, id: 'request-1' };
  return {
    subject: pattern,
    reply: '_INBOX.reply',
    data: new TextEncoder().encode(JSON.stringify(packet)),
    headers: undefined,
    json: () => packet,
    respond,
  };
}

/** Resolves once `check` holds, polling on the event loop (Nest publishes replies on a later tick). */
async function until(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !check(); attempt++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

describe('RelayNatsServer', () => {
  it('frees the request slot when its reply cannot be published, and answers the caller with an error instead', async () => {
    const load = new ServiceLoad(1);
    const server = new RelayNatsServer('pfx', { queue: 'tasks' }, 10_000, load);
    server.addHandler('relay.tasks.v1.get', async () => ({ big: 'x'.repeat(100) }), false);
    const fake = fakeConnection();
    server.bindEvents(fake.connection);
    const replies: string[] = [];
    let refusals = 0;
    const respond = (data: string | Uint8Array): boolean => {
      const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
      if (text.includes('"big"')) {
        refusals += 1;
        throw new Error('MAX_PAYLOAD_EXCEEDED');
      }
      replies.push(text);
      return true;
    };

    for (let call = 1; call <= 3; call++) {
      await server.handleMessage('relay.tasks.v1.get', fakeRequest('relay.tasks.v1.get', respond) as never);
      await until(() => replies.length === call);
      expect(load.inFlight).toBe(0);
    }
    expect(refusals).toBe(3);
    const answer = JSON.parse(replies[2]) as { err: { reason: string; data: { cause: string } }; isDisposed: boolean };
    expect(answer.err.reason).toBe('internal_error');
    expect(answer.err.data.cause).toBe('reply_not_published');
    expect(answer.isDisposed).toBe(true);
  });

  it('finds a handler by the subject as it is, never parsing the subject as JSON', async () => {
    const server = new RelayNatsServer('pfx', { queue: 'tasks' });
    const handled: string[] = [];
    server.addHandler(
      'relay.tasks.v1.get',
      async () => {
        handled.push('get');
        return { ok: true };
      },
      false,
    );
    server.bindEvents(fakeConnection().connection);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const replies: string[] = [];
      const respond = (data: string | Uint8Array): boolean => {
        replies.push(typeof data === 'string' ? data : new TextDecoder().decode(data));
        return true;
      };
      await server.handleMessage('relay.tasks.v1.get', fakeRequest('relay.tasks.v1.get', respond) as never);
      await until(() => replies.length === 1);
      expect(handled).toEqual(['get']);
      expect(parse.mock.calls.filter(([text]) => text === 'relay.tasks.v1.get')).toEqual([]);
    } finally {
      parse.mockRestore();
    }
  });

  it('drops unanswered a request from outside the relay whose reply is not the caller’s inbox, and counts it', async () => {
    const load = new ServiceLoad();
    const server = new RelayNatsServer('', { queue: 'notifier' }, 10_000, load);
    const handled: string[] = [];
    server.addHandler(
      'relay.notifier.v1.event_consumers.ensure',
      async (_data: unknown, context: { getSubject(): string }) => {
        handled.push(context.getSubject());
        return { name: 'audit' };
      },
      false,
    );
    server.bindEvents(fakeConnection().connection);
    const ask = async (reply: string | undefined): Promise<string[]> => {
      const replies: string[] = [];
      const message = { ...fakeRequest('relay.notifier.v1.event_consumers.ensure', (data) => replies.push(String(data)) > 0) };
      await server.handleMessage('relay.notifier.v1.event_consumers.ensure', {
        ...message,
        subject: 'relay.notifier.v1.event_consumers.audit.ensure',
        reply,
      } as never);
      return replies;
    };
    for (const forged of ['relay.events.task.forged', 'relay.ratelimit.agent-1', 'relay.directory.v1.keys.create', '_INBOX_edge.1', undefined]) {
      expect(await ask(forged)).toEqual([]);
    }
    expect(handled).toEqual([]);
    expect(load.report().misdirected_replies_total).toBe(5);
    const own = await ask('_INBOX_consumer_audit.1');
    await until(() => own.length === 1);
    const imported = await ask('_R_.abc.def');
    await until(() => imported.length === 1);
    expect(handled).toHaveLength(2);
    expect(load.report().misdirected_replies_total).toBe(5);
  });

  it('reports overload only after refusing every new request for a while', () => {
    let now = 1_000;
    const load = new ServiceLoad(2, () => now);
    load.started();
    load.started();
    expect(load.hasRoom).toBe(false);
    expect(load.overloaded).toBe(false);
    now += 5_000;
    expect(load.overloaded).toBe(true);
    load.finished();
    expect(load.overloaded).toBe(false);
    expect(load.report()).toMatchObject({ in_flight: 1, max_in_flight: 2, saturated_since: null });
  });

  it('subscribes under the prefix, and on close stops taking requests, then flushes and drains the connection', async () => {
    const server = new RelayNatsServer('pfx', { queue: 'tasks' });
    server.addHandler('relay.tasks.v1.get', async () => ({}), false);
    const fake = fakeConnection();
    server.bindEvents(fake.connection);
    expect(fake.subjects).toEqual(['pfx.relay.tasks.v1.get']);

    await server.close();
    expect(fake.unsubscribed).toEqual(['pfx.relay.tasks.v1.get']);
    expect(fake.calls).toEqual(['flush', 'drain']);
  });

  it('refuses to start on a connection it could not drain at shutdown', () => {
    const server = new RelayNatsServer('pfx', { queue: 'tasks' });
    const { connection } = fakeConnection();
    expect(() => server.bindEvents({ ...connection, drain: undefined } as unknown as typeof connection)).toThrow(/cannot be drained/);
  });
});
