import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RelayError } from '@app/contracts';
import { bindingOf, sendJsonRpcError, type RoutedRequest } from '../endpoint/http-intake';
import { sendRestErrorForPath } from '../errors/rest-errors';

/** The deepest nesting of objects and arrays a request body may have. */
export const MAX_JSON_DEPTH = 64;

/** What is wrong with an input, and where: a JSON path such as `params.message.parts[0].text`. */
export interface InputProblem {
  path: string;
  problem: string;
}

const NUL = '\u0000';
/** A UTF-16 surrogate that is not half of a pair: no UTF-8 text (and no Postgres text or jsonb) can hold it. */
const LONE_SURROGATE = /\p{Cs}/u;

/** What makes a string unstorable, or undefined: U+0000 or a lone surrogate such as `\ud800`. */
function stringProblem(value: string): string | undefined {
  if (value.includes(NUL)) return 'the character U+0000';
  if (LONE_SURROGATE.test(value)) return 'a lone UTF-16 surrogate (such as \\ud800)';
  return undefined;
}
const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

function memberPath(parent: string, key: string): string {
  if (IDENTIFIER.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** Arrays and plain objects, as JSON and YAML parse them (not the markers of unparseable bodies). */
function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  if (Array.isArray(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Walks a parsed JSON (or YAML) value once, in document order and without recursion, and names
 * the first string or key that contains U+0000 or a lone surrogate (Postgres cannot store either)
 * or the first object or array nested deeper than `maxDepth`.
 */
export function findInputProblem(value: unknown, root = '', outerDepth = 0, maxDepth = MAX_JSON_DEPTH): InputProblem | undefined {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: outerDepth }];
  while (pending.length > 0) {
    const { value: current, path, depth } = pending.pop()!;
    if (typeof current === 'string') {
      const unstorable = stringProblem(current);
      if (unstorable) return { path, problem: `must not contain ${unstorable}` };
      continue;
    }
    if (!isContainer(current)) continue;
    if (depth + 1 > maxDepth) return { path, problem: `nests objects and arrays deeper than ${maxDepth} levels` };
    const children: Array<{ value: unknown; path: string; depth: number }> = [];
    if (Array.isArray(current)) {
      current.forEach((item, index) => children.push({ value: item, path: `${path}[${index}]`, depth: depth + 1 }));
    } else {
      for (const [key, item] of Object.entries(current)) {
        const unstorable = stringProblem(key);
        if (unstorable) return { path: path || '(body)', problem: `has a key that contains ${unstorable}` };
        children.push({ value: item, path: memberPath(path, key), depth: depth + 1 });
      }
    }
    for (let index = children.length - 1; index >= 0; index -= 1) pending.push(children[index]);
  }
  return undefined;
}

function isJsonRpcCall(request: Pick<FastifyRequest, 'method'> & RoutedRequest): boolean {
  return request.method === 'POST' && bindingOf(request) === 'json-rpc';
}

/** The first problem in a request's route params, query string and body, named as the client wrote it. */
export function findRequestProblem(request: Pick<FastifyRequest, 'method' | 'params' | 'query' | 'body'> & RoutedRequest): InputProblem | undefined {
  const routeParams = request.params as Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(routeParams ?? {})) {
    const unstorable = typeof value === 'string' ? stringProblem(value) : undefined;
    if (unstorable) return { path: name === '*' ? 'path' : name, problem: `must not contain ${unstorable}` };
  }
  // The query parser's object has a prototype of its own: read its entries as a plain object's.
  const query = findInputProblem({ ...(request.query as Record<string, unknown> | undefined) });
  if (query) return query;
  if (!isJsonRpcCall(request)) return findInputProblem(request.body ?? {});
  // JSON-RPC fields are named relative to `params`, as the parameter errors of every method are.
  const body = request.body;
  if (!isContainer(body) || Array.isArray(body)) return findInputProblem(body ?? {});
  const { params, ...envelope } = body;
  return findInputProblem(envelope) ?? findInputProblem(params ?? {}, isContainer(params) ? '' : 'params', 1);
}

function requestIdOf(body: unknown): string | number | null {
  if (!isContainer(body) || Array.isArray(body)) return null;
  const id = body.id;
  return (typeof id === 'string' && stringProblem(id) === undefined) || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

function reject(request: FastifyRequest, reply: FastifyReply, problem: InputProblem): FastifyReply {
  const message = `${problem.path} ${problem.problem}`;
  if (bindingOf(request) === 'http-json') {
    sendRestErrorForPath(request.url, reply, new RelayError('invalid_params', message, { field: problem.path }));
    return reply;
  }
  if (isJsonRpcCall(request)) {
    sendJsonRpcError(reply, request.headers, new RelayError('invalid_params', message, { field: problem.path }), requestIdOf(request.body));
    return reply;
  }
  return reply
    .code(400)
    .header('content-type', 'application/json; charset=utf-8')
    .send({ error: { reason: 'invalid_params', message, fields: [{ field: problem.path, messages: [problem.problem] }] } });
}

/**
 * One check of every request's input before any route sees it: route params, query and the parsed
 * body. A JSON-RPC call is answered -32602 naming the field, an HTTP+JSON call 400 with a
 * `google.rpc.Status` body, any other route 400.
 */
export function configureInputGuard(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('preValidation', async (request, reply) => {
    if (reply.sent) return reply;
    const problem = findRequestProblem(request);
    return problem ? reject(request, reply, problem) : undefined;
  });
}
