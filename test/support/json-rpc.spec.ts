import { expectRpcError, rpcErrorFacts } from './json-rpc';

describe('rpcErrorFacts', () => {
  it('reads the symbol and field of an AgentRelay or A2A v0.3 error from data', () => {
    const error = { code: -32602, message: 'Invalid parameters', data: { reason: 'invalid_params', field: 'recipient' } };
    expect(rpcErrorFacts(error)).toEqual({ code: -32602, message: 'Invalid parameters', shape: 'data', reason: 'invalid_params', field: 'recipient' });
  });

  it('reads them from the ErrorInfo metadata of an A2A v1.0 error', () => {
    const error = {
      code: -32602,
      message: 'Invalid parameters',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'INVALID_PARAMS',
          domain: 'a2a-protocol.org',
          metadata: { relay_reason: 'invalid_params', field: 'message.contextId' },
        },
      ],
    };
    expect(rpcErrorFacts(error)).toEqual({
      code: -32602,
      message: 'Invalid parameters',
      shape: 'error-info',
      reason: 'invalid_params',
      field: 'message.contextId',
    });
  });

  it('leaves out what the error does not say', () => {
    expect(rpcErrorFacts({ code: -32700, message: 'Invalid JSON payload' })).toEqual({ code: -32700, message: 'Invalid JSON payload', shape: 'data' });
  });
});

describe('expectRpcError', () => {
  const error = { code: -32600, message: 'jsonrpc must be exactly "2.0"', data: { reason: 'invalid_request', field: 'jsonrpc' } };

  it('passes when code, symbol and field match', () => {
    expectRpcError(error, { code: -32600, reason: 'invalid_request', field: 'jsonrpc', shape: 'data' });
  });

  it('fails naming what the error held', () => {
    expect(() => expectRpcError(error, { code: -32600, field: 'method' })).toThrow(/jsonrpc/);
    expect(() => expectRpcError(error, { code: -32600, shape: 'error-info' })).toThrow(/data/);
    expect(() => expectRpcError(undefined, { code: -32600 })).toThrow(/expected a JSON-RPC error object/);
  });
});
