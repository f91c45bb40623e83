import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { ConfigValidationError, loadConfig } from '@app/config';
import { RelayError } from '@app/contracts';
import { EdgeConfig } from '../edge.config';
import { StreamIds } from './stream-ids';

/** What EdgeConfig requires beside the values a test sets. */
const EDGE_REQUIRED = {
  RELAY_NOTIFIER_PUBLIC_KEY: generateNotifierSealingKeyPair('test').publicKey,
  RELAY_ASSERTION_PUBLIC_KEYS: generateAssertionKeyPair('test').publicKey,
};

const key = Buffer.alloc(32, 1).toString('base64');

function rejected(read: () => unknown): RelayError {
  try {
    read();
  } catch (error) {
    return error as RelayError;
  }
  throw new Error('the id was read');
}

describe('StreamIds', () => {
  const ids = new StreamIds({ RELAY_STREAM_ID_KEY: key } as EdgeConfig);

  it('reads back the position of an id it wrote, on any instance with the same key', () => {
    const id = ids.encode('18446744073709551615', 'agent-a', 'inbox');
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(new StreamIds({ RELAY_STREAM_ID_KEY: key } as EdgeConfig).decode(id, 'agent-a', 'inbox')).toBe('18446744073709551615');
    expect(ids.decode(ids.encode('0', 'agent-a', { task: 'T1' }), 'agent-a', { task: 't1' })).toBe('0');
  });

  it('gives each agent and each stream its own ids, and refuses the others as invalid_params naming Last-Event-ID', () => {
    const id = ids.encode('42', 'agent-a', { task: 'T1' });
    expect(ids.encode('42', 'agent-b', { task: 'T1' })).not.toBe(id);
    expect(ids.encode('42', 'agent-a', 'inbox')).not.toBe(id);
    for (const read of [
      () => ids.decode(id, 'agent-b', { task: 'T1' }),
      () => ids.decode(id, 'agent-a', { task: 'T2' }),
      () => ids.decode(id, 'agent-a', 'inbox'),
      () => new StreamIds({ RELAY_STREAM_ID_KEY: Buffer.alloc(32, 2).toString('base64') } as EdgeConfig).decode(id, 'agent-a', { task: 'T1' }),
      () => ids.decode('42', 'agent-a', { task: 'T1' }),
      () => ids.decode('not an id', 'agent-a', { task: 'T1' }),
    ]) {
      const error = rejected(read);
      expect(error).toBeInstanceOf(RelayError);
      expect(error).toMatchObject({ reason: 'invalid_params', data: { field: 'Last-Event-ID' } });
    }
  });

  it('derives one key from RELAY_ADMIN_TOKEN when RELAY_STREAM_ID_KEY is unset', () => {
    const config = { RELAY_ADMIN_TOKEN: 'an-admin-token-of-the-relay' } as EdgeConfig;
    const id = new StreamIds(config).encode('7', 'agent-a', 'inbox');
    expect(new StreamIds(config).decode(id, 'agent-a', 'inbox')).toBe('7');
  });

  it('takes RELAY_STREAM_ID_KEY only as the base64 of 32 bytes, checked at boot', () => {
    expect(loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_STREAM_ID_KEY: key }).RELAY_STREAM_ID_KEY).toBe(key);
    expect(loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_STREAM_ID_KEY: '' }).RELAY_STREAM_ID_KEY).toBeUndefined();
    for (const wrong of [Buffer.alloc(16, 1).toString('base64'), 'not base64 at all, but 44 characters long!!', key.slice(0, -1)]) {
      expect(() => loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_STREAM_ID_KEY: wrong })).toThrow(ConfigValidationError);
    }
  });
});
