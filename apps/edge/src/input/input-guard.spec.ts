import { agentBinding } from '../endpoint/http-intake';
import { findInputProblem, findRequestProblem, MAX_JSON_DEPTH } from './input-guard';

const JSON_RPC_ROUTE = { config: agentBinding('json-rpc') };
const OTHER_ROUTE = { config: {} };

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? { a: value } : [value];
  return value;
}

describe('input guard', () => {
  it('names the JSON path of the first string containing U+0000, in document order', () => {
    const body = { message: { parts: [{ text: 'fine' }, { text: 'bad\u0000' }], metadata: { later: '\u0000' } } };
    expect(findInputProblem(body)).toEqual({ path: 'message.parts[1].text', problem: 'must not contain the character U+0000' });
  });

  it('names the object whose key contains U+0000, and quotes keys that are not identifiers', () => {
    expect(findInputProblem({ metadata: { 'a\u0000b': 1 } })).toEqual({ path: 'metadata', problem: 'has a key that contains the character U+0000' });
    expect(findInputProblem({ metadata: { 'x y': '\u0000' } })).toEqual({ path: 'metadata["x y"]', problem: 'must not contain the character U+0000' });
  });

  it('names a string or key holding a lone surrogate, and accepts paired ones (emoji)', () => {
    expect(findInputProblem({ message: { parts: [{ text: 'ok \ud83d\ude00' }, { text: 'bad \ud800' }] } })).toEqual({
      path: 'message.parts[1].text',
      problem: 'must not contain a lone UTF-16 surrogate (such as \\ud800)',
    });
    expect(findInputProblem({ text: '\udc00 trailing half first' })?.path).toBe('text');
    expect(findInputProblem({ metadata: { 'k\ud800': 1 } })).toEqual({
      path: 'metadata',
      problem: 'has a key that contains a lone UTF-16 surrogate (such as \\ud800)',
    });
    expect(findInputProblem(JSON.parse('{"text":"\\ud83d\\ude00 \\u00e9"}'))).toBeUndefined();
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses one more, without recursing`, () => {
    expect(findInputProblem(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(findInputProblem(nested(MAX_JSON_DEPTH + 1))?.problem).toBe(`nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`);
    expect(findInputProblem(JSON.parse(`${'['.repeat(200000)}${']'.repeat(200000)}`))?.problem).toMatch(/deeper than/);
  });

  it('accepts ordinary input', () => {
    expect(findInputProblem({ a: ['b', 1, null, true, { c: 'd' }] })).toBeUndefined();
  });

  it('checks route params and the query first, and names JSON-RPC fields relative to params', () => {
    expect(findRequestProblem({ method: 'POST', routeOptions: JSON_RPC_ROUTE, params: { handle: 'a\u0000' }, query: {}, body: {} })).toEqual({
      path: 'handle',
      problem: 'must not contain the character U+0000',
    });
    expect(findRequestProblem({ method: 'POST', routeOptions: OTHER_ROUTE, params: {}, query: { q: '\u0000' }, body: undefined })?.path).toBe('q');
    const call = { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { task_id: 'x\u0000' } };
    expect(findRequestProblem({ method: 'POST', routeOptions: JSON_RPC_ROUTE, params: {}, query: {}, body: call })?.path).toBe('task_id');
    expect(
      findRequestProblem({ method: 'POST', routeOptions: JSON_RPC_ROUTE, params: {}, query: {}, body: { ...call, params: {}, method: 'm\u0000' } })?.path,
    ).toBe('method');
    expect(findRequestProblem({ method: 'POST', routeOptions: OTHER_ROUTE, params: {}, query: {}, body: { handle: 'a\u0000' } })?.path).toBe('handle');
    expect(findRequestProblem({ method: 'POST', routeOptions: JSON_RPC_ROUTE, params: {}, query: {}, body: { ...call, params: 'p\u0000' } })?.path).toBe(
      'params',
    );
  });
});
