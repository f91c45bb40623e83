import { jest } from '@jest/globals';
import { loadConfig } from '@app/config';
import { DIRECTORY_SUBJECTS, RelayError, type AgentIdentity } from '@app/contracts';
import type { NatsRpcClient } from '@app/messaging';
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
    const request = jest.fn(reply);
    return { request, authenticator: new AgentAuthenticator({ request } as unknown as NatsRpcClient) };
  }

  it('asks the directory on every call, with the key only', async () => {
    const { request, authenticator } = withDirectory(async () => IDENTITY);
    await expect(authenticator.authenticate({ 'x-api-key': KEY })).resolves.toEqual(IDENTITY);
    await expect(authenticator.authenticate({ 'x-api-key': KEY })).resolves.toEqual(IDENTITY);
    expect(request).toHaveBeenCalledTimes(2);
    expect(request).toHaveBeenCalledWith(DIRECTORY_SUBJECTS.authenticate, { api_key: KEY });
  });

  it('refuses a missing or malformed key without asking the directory', async () => {
    const { request, authenticator } = withDirectory(async () => IDENTITY);
    for (const headers of [{}, { authorization: 'Bearer admin-token-0123456789abcdef' }, { 'x-api-key': KEY.toLowerCase() }]) {
      await expect(authenticator.authenticate(headers)).rejects.toMatchObject({ reason: 'unauthenticated' });
    }
    expect(request).not.toHaveBeenCalled();
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
