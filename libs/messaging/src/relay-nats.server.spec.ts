import { jest } from '@jest/globals';
import { RelayNatsServer } from './relay-nats.server';

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

describe('RelayNatsServer', () => {
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
