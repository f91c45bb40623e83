import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../api/api-error';
import { newUpstreamAgent, upstreamErrorField, type UpstreamFormField } from './upstream-form';

const blank: Record<UpstreamFormField, string> = {
  handle: ' echo@acme ',
  name: 'Echo',
  card_url: 'https://echo.acme.test/.well-known/agent-card.json',
  scheme: 'none',
  secret: '',
  header_name: '',
  client_id: '',
  token_url: '',
  scope: '',
  resource: '',
};

describe('newUpstreamAgent', () => {
  it('sends no credential for the kind none, whatever the hidden fields hold', () => {
    expect(newUpstreamAgent({ ...blank, secret: 'left over', header_name: 'X-Key' })).toEqual({
      handle: 'echo@acme',
      name: 'Echo',
      upstream: { card_url: 'https://echo.acme.test/.well-known/agent-card.json' },
    });
  });

  it("sends an API key with its header, and only the kind's own fields", () => {
    expect(newUpstreamAgent({ ...blank, scheme: 'api_key', secret: 'k-1', header_name: 'X-Echo-Key', client_id: 'ignored' }).upstream.auth).toEqual({
      scheme: 'api_key',
      secret: 'k-1',
      header_name: 'X-Echo-Key',
    });
  });

  it('sends OAuth2 client credentials with the optional fields given, blank ones left out', () => {
    expect(newUpstreamAgent({ ...blank, scheme: 'oauth2', secret: 's', client_id: 'relay', scope: 'a2a', token_url: ' ' }).upstream.auth).toEqual({
      scheme: 'oauth2',
      secret: 's',
      client_id: 'relay',
      scope: 'a2a',
    });
  });
});

describe('upstreamErrorField', () => {
  it('names the input of a validation error on a nested field', () => {
    const error = new ApiError(400, 'invalid_params', 'upstream.auth.secret: must not be empty', {}, [{ field: 'upstream.auth.secret', messages: ['x'] }]);
    expect(upstreamErrorField(error)).toBe('secret');
  });

  it("names the card URL for the card reader's refusal, from the message", () => {
    expect(upstreamErrorField(new ApiError(400, 'invalid_params', 'upstream.card_url: address 127.0.0.1 is not allowed'))).toBe('card_url');
  });

  it('names no input for an error of no field, or another kind of error', () => {
    expect(upstreamErrorField(new ApiError(409, 'handle_taken', 'The handle echo@acme is taken'))).toBeNull();
    expect(upstreamErrorField(new Error('network down'))).toBeNull();
  });
});
