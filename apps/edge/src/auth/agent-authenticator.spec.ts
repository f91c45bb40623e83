import { jest } from '@jest/globals';
import { loadConfig } from '@app/config';
import { RelayError, type AgentIdentity } from '@app/contracts';
import type { DirectoryLookups } from '../directory/directory-lookups';
import { EdgeConfig } from '../edge.config';
import { isAdminToken } from './admin-token.guard';
import { AgentAuthenticator, extractApiKey } from './agent-authenticator';

const KEY = `ah_live_${'ABCDEFGH234567QR'.repeat(2)}`;
const IDENTITY: AgentIdentity = { id: 'a1', handle: 'bob@acme', name: 'Bob', role: null, org: 'acme' };

describe('extractApiKey', () => {
  it('reads Authorization: Bearer (any case) and X-API-Key', () => {
    expect(extractApiKey({ authorization: `Bearer ${KEY}` })).toBe(KEY);
    expect(extractApiKey({ authorization: `bearer   ${KEY}` })).toBe(KEY);
    expect(extractApiKey({ 'x-api-key': ` ${KEY} ` })).toBe(KEY);
    expect(extractApiKey({ authorization: `Bearer ${KEY}`, 'x-api-key': KEY })).toBe(KEY);
    expect(extractApiKey({})).toBeUndefined();
    expect(extractApiKey({ 'x-api-key': '' })).toBeUndefined();
  });

  it('refuses other schemes, a bare key and two different keys', () => {
    expect(() => extractApiKey({ authorization: KEY })).toThrow(RelayError);
    expect(() => extractApiKey({ authorization: `Basic ${KEY}` })).toThrow(RelayError);
    expect(() => extractApiKey({ authorization: `Bearer ${KEY}`, 'x-api-key': `${KEY.slice(0, -1)}A` })).toThrow(RelayError);
  });
});

describe('AgentAuthenticator', () => {
  function withDirectory(reply: () => Promise<AgentIdentity>) {
    const authenticate = jest.fn(reply);
    return { authenticate, authenticator: new AgentAuthenticator({ authenticate } as unknown as DirectoryLookups) };
  }

  it('asks the directory with the key only', async () => {
    const { authenticate, authenticator } = withDirectory(async () => IDENTITY);
    await expect(authenticator.authenticate({ 'x-api-key': KEY })).resolves.toEqual(IDENTITY);
    expect(authenticate).toHaveBeenCalledWith(KEY);
  });

  it('refuses a missing or malformed key without asking the directory', async () => {
    const { authenticate, authenticator } = withDirectory(async () => IDENTITY);
    for (const headers of [{}, { authorization: 'Bearer admin-token-0123456789abcdef' }, { 'x-api-key': KEY.toLowerCase() }]) {
      await expect(authenticator.authenticate(headers)).rejects.toMatchObject({ reason: 'unauthenticated' });
    }
    expect(authenticate).not.toHaveBeenCalled();
  });
});

describe('isAdminToken', () => {
  const token = 'admin-token-0123456789abcdef';
  it('matches only the configured token, and never when unset or when shaped like an agent key', () => {
    expect(isAdminToken(token, token)).toBe(true);
    expect(isAdminToken(`${token}x`, token)).toBe(false);
    expect(isAdminToken(token.slice(1), token)).toBe(false);
    expect(isAdminToken(undefined, token)).toBe(false);
    expect(isAdminToken(token, undefined)).toBe(false);
    expect(isAdminToken('', '')).toBe(false);
    expect(isAdminToken(KEY, KEY)).toBe(false);
  });
});

describe('RELAY_ADMIN_TOKEN', () => {
  it('may not be shaped like an agent key', () => {
    expect(() => loadConfig(EdgeConfig, { RELAY_ADMIN_TOKEN: KEY })).toThrow(/agent API key/);
    expect(loadConfig(EdgeConfig, { RELAY_ADMIN_TOKEN: 'admin-token-0123456789abcdef' }).RELAY_ADMIN_TOKEN).toBe('admin-token-0123456789abcdef');
  });
});
