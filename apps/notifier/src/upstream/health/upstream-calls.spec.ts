import { callMethodOf, failureKindOf, statusKindOf } from './upstream-calls';
import { SsrfRefusedError } from '../../outbound/ssrf-guard';
import { AnswerTooLargeError, DeadlineExceededError } from '../../outbound/guarded-fetch';

describe('upstream calls', () => {
  it('name the A2A method from the JSON-RPC body (both versions) or the HTTP+JSON path', () => {
    const url = new URL('https://agent.example.com/a2a');
    expect(callMethodOf('POST', url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage' }))).toBe('SendMessage');
    expect(callMethodOf('POST', url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get' }))).toBe('GetTask');
    expect(callMethodOf('POST', url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/resubscribe' }))).toBe('SubscribeToTask');
    expect(callMethodOf('POST', url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Unheard' }))).toBe('other');
    expect(callMethodOf('POST', new URL('https://a.example.com/v1/message:stream'), '{"message":{}}')).toBe('SendStreamingMessage');
    expect(callMethodOf('POST', new URL('https://a.example.com/message:send'), '{"message":{}}')).toBe('SendMessage');
    expect(callMethodOf('GET', new URL('https://a.example.com/tasks/t-1'), null)).toBe('GetTask');
    expect(callMethodOf('POST', new URL('https://a.example.com/tasks/t-1:cancel'), '{}')).toBe('CancelTask');
    expect(callMethodOf('GET', new URL('https://a.example.com/tasks/t-1:subscribe'), null)).toBe('SubscribeToTask');
    expect(callMethodOf('GET', new URL('https://a.example.com/tasks?contextId=c'), null)).toBe('ListTasks');
  });

  it('sort failures into bounded kinds', () => {
    expect(failureKindOf(new SsrfRefusedError('loopback'))).toBe('refused');
    expect(failureKindOf(Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }))).toBe('tls');
    expect(failureKindOf(Object.assign(new Error('tlsv13 alert certificate required'), { code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' }))).toBe('tls');
    expect(failureKindOf(new Error('no answer within 100 ms'))).toBe('timeout');
    // What the SDK throws when the body it read was cut off: the cause names why.
    expect(failureKindOf(new Error('HTTP error for GetTask', { cause: new AnswerTooLargeError(1024) }))).toBe('too_large');
    expect(failureKindOf(new TypeError('terminated', { cause: new DeadlineExceededError(100) }))).toBe('timeout');
    expect(failureKindOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe('connection');
    expect([200, 401, 403, 404, 429, 502].map(statusKindOf)).toEqual(['ok', 'unauthorized', 'unauthorized', 'http_4xx', 'http_4xx', 'http_5xx']);
  });
});
