import { RelayError } from '@app/contracts';
import { readAfterResync } from './resync-read';

const unavailable = () => new RelayError('service_unavailable', 'The tasks service is unavailable (no responders)');

describe('readAfterResync', () => {
  it('reads again while the tasks service is not reachable yet, and answers the first read that succeeds', async () => {
    let attempts = 0;
    const read = async () => {
      attempts += 1;
      if (attempts < 3) throw attempts === 1 ? unavailable() : new RelayError('service_timeout', 'no answer in time');
      return 'page';
    };
    await expect(readAfterResync(read, Date.now() + 30_000, new AbortController().signal)).resolves.toBe('page');
    expect(attempts).toBe(3);
  });

  it('does not read again after a failure that is not an outage', async () => {
    let attempts = 0;
    const read = async () => {
      attempts += 1;
      throw new RelayError('events_expired', 'gone');
    };
    await expect(readAfterResync(read, Date.now() + 30_000, new AbortController().signal)).rejects.toMatchObject({ reason: 'events_expired' });
    expect(attempts).toBe(1);
  });

  it('gives up at the stream deadline with the outage it last saw', async () => {
    let attempts = 0;
    const read = async () => {
      attempts += 1;
      throw unavailable();
    };
    await expect(readAfterResync(read, Date.now() + 600, new AbortController().signal)).rejects.toMatchObject({ reason: 'service_unavailable' });
    expect(attempts).toBeGreaterThanOrEqual(2);
  });

  it('stops when the client goes away', async () => {
    const client = new AbortController();
    const read = async () => {
      setTimeout(() => client.abort(), 10);
      throw unavailable();
    };
    await expect(readAfterResync(read, Date.now() + 30_000, client.signal)).rejects.toBeDefined();
  });
});
