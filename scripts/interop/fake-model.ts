// A scripted model API on loopback for the real-clients check (scripts/interop/real-clients.sh): the
// Anthropic Messages API (Claude Code) and the OpenAI Responses API (Codex), both streaming. The
// script: find the handoff's task id in what the client sent (the session hook's text), call the
// relay's get_thread tool with it, then its reply tool, then end the turn. Every request is logged,
// one JSON line each, to the file named by FAKE_MODEL_LOG (and each body whole into FAKE_MODEL_BODIES).
//
// Usage: node --import ./test/support/process/register-ts.mjs scripts/interop/fake-model.ts <port file>
// It listens on a free 127.0.0.1 port and writes that port to <port file>.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';

const REPLY_TEXT = 'Read the handoff; the change looks right to me.';
const TASK_ID_PATTERN = /New handoff (\S+) from/;
/** Codex announces an MCP server's tools once the server is up, which can be after the first search. */
const MAX_TOOL_SEARCHES = 3;

type Json = Record<string, unknown>;

const logFile = process.env.FAKE_MODEL_LOG;
/** Where each request's body is kept whole (FAKE_MODEL_BODIES, optional), as <sequence>.json. */
const bodiesDir = process.env.FAKE_MODEL_BODIES;
let requests = 0;
const portFile = process.argv[2];
if (!logFile || !portFile) {
  console.error('Usage: FAKE_MODEL_LOG=<file> fake-model.ts <port file>');
  process.exit(2);
}
if (bodiesDir) mkdirSync(bodiesDir, { recursive: true });

function log(entry: Json): void {
  appendFileSync(logFile!, `${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`);
}

/** Every string anywhere in the request, so the task id is found wherever the client put the hook's text. */
function strings(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const entry of value) strings(entry, into);
  else if (value && typeof value === 'object') for (const entry of Object.values(value)) strings(entry, into);
  return into;
}

function taskIdIn(body: unknown): string | null {
  for (const text of strings(body)) {
    const match = TASK_ID_PATTERN.exec(text);
    if (match) return match[1];
  }
  return null;
}

/** The next step of the script, from the tool calls the conversation already holds. */
function nextStep(calledTools: string[], toolNames: string[], body: unknown): { tool: string; input: Json } | null {
  const getThread = toolNames.find((name) => name.endsWith('get_thread'));
  const reply = toolNames.find((name) => name.endsWith('reply') && name.includes('agentrelay'));
  const taskId = taskIdIn(body);
  if (!getThread || !reply || !taskId) return null;
  if (!calledTools.some((name) => name.endsWith('get_thread'))) return { tool: getThread, input: { task_id: taskId } };
  if (!calledTools.some((name) => name.endsWith('reply'))) return { tool: reply, input: { task_id: taskId, message: REPLY_TEXT } };
  return null;
}

function sse(response: ServerResponse, events: Array<{ event: string; data: Json }>): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const { event, data } of events) response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  response.end();
}

let counter = 0;
const nextId = (prefix: string): string => `${prefix}_${Date.now()}_${++counter}`;

function anthropic(body: Json, response: ServerResponse): void {
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]).map((tool) => String(tool.name)) : [];
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  const called = messages
    .filter((message) => message.role === 'assistant' && Array.isArray(message.content))
    .flatMap((message) => (message.content as Json[]).filter((block) => block.type === 'tool_use').map((block) => String(block.name)));
  const step = nextStep(called, tools, body);
  const content: Json[] = step ? [{ type: 'tool_use', id: nextId('toolu'), name: step.tool, input: step.input }] : [{ type: 'text', text: 'Done.' }];
  log({ api: 'anthropic', model: body.model, tools: tools.filter((name) => name.includes('agentrelay')), toolCount: tools.length, called, answer: content });
  const message = {
    id: nextId('msg'),
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'fake',
    content: [] as Json[],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  };
  const stopReason = step ? 'tool_use' : 'end_turn';
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...message, content, stop_reason: stopReason, usage: { input_tokens: 10, output_tokens: 5 } }));
    return;
  }
  const events: Array<{ event: string; data: Json }> = [{ event: 'message_start', data: { type: 'message_start', message } }];
  content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      events.push(
        { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { ...block, input: {} } } },
        {
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
        },
      );
    } else {
      events.push(
        { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } } },
      );
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push(
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  );
  sse(response, events);
}

/** Tool names as Codex offers them: plain functions, or functions inside a namespace. */
function responsesToolNames(tools: Json[]): Array<{ name: string; namespace?: string }> {
  return tools.flatMap((tool) => {
    if (Array.isArray(tool.tools)) return (tool.tools as Json[]).map((inner) => ({ name: String(inner.name), namespace: String(tool.name) }));
    return tool.name ? [{ name: String(tool.name) }] : [];
  });
}

function responses(body: Json, response: ServerResponse): void {
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  // Codex defers MCP tools behind its client-side tool_search: the tools a search found come back in
  // the next request's input, as tool_search_output items.
  const found = input.filter((item) => item.type === 'tool_search_output' && Array.isArray(item.tools)).flatMap((item) => item.tools as Json[]);
  const offered = responsesToolNames([...(Array.isArray(body.tools) ? (body.tools as Json[]) : []), ...found]);
  const qualified = (name: unknown, namespace: unknown): string => (namespace ? `${String(namespace)}__${String(name)}` : String(name));
  const called = input.filter((item) => item.type === 'function_call').map((item) => qualified(item.name, item.namespace));
  const step = nextStep(
    called,
    offered.map((tool) => qualified(tool.name, tool.namespace)),
    body,
  );
  const canSearch = Array.isArray(body.tools) && (body.tools as Json[]).some((tool) => tool.type === 'tool_search');
  const relayToolsFound = offered.some((entry) => qualified(entry.name, entry.namespace).endsWith('get_thread'));
  const searches = input.filter((item) => item.type === 'tool_search_call').length;
  const responseId = nextId('resp');
  const tool = step ? offered.find((entry) => qualified(entry.name, entry.namespace) === step.tool) : undefined;
  let item: Json;
  if (step && tool) {
    const namespace = tool.namespace ? { namespace: tool.namespace } : {};
    item = { type: 'function_call', id: nextId('fc'), call_id: nextId('call'), name: tool.name, arguments: JSON.stringify(step.input), ...namespace };
  } else if (canSearch && !relayToolsFound && searches < MAX_TOOL_SEARCHES && taskIdIn(body)) {
    item = {
      type: 'tool_search_call',
      id: nextId('ts'),
      call_id: nextId('call'),
      execution: 'client',
      status: 'completed',
      arguments: { query: 'agentrelay get_thread reply', limit: 8 },
    };
  } else {
    item = { type: 'message', id: nextId('msg'), role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] };
  }
  log({
    api: 'responses',
    model: body.model,
    tools: offered.filter((tool) => `${tool.namespace ?? ''}${tool.name}`.includes('agentrelay') || /get_thread|reply/.test(tool.name)),
    toolCount: offered.length,
    called,
    answer: item,
  });
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  sse(response, [
    { event: 'response.created', data: { type: 'response.created', response: { id: responseId, status: 'in_progress' } } },
    { event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: 0, item } },
    { event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: 0, item } },
    { event: 'response.completed', data: { type: 'response.completed', response: { id: responseId, status: 'completed', output: [item], usage } } },
  ]);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(raw: string): Json | null {
  if (!raw) return {};
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

const server = createServer((request, response) => {
  void (async () => {
    const raw = await readBody(request);
    const body = parseBody(raw);
    const path = (request.url ?? '/').split('?')[0];
    const sequence = ++requests;
    log({ request: `${request.method} ${request.url}`, sequence, bytes: raw.length, stream: body?.stream === true });
    if (bodiesDir) writeFileSync(join(bodiesDir, `${String(sequence).padStart(3, '0')}.json`), raw);
    if (!body) {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'the body is not a JSON object' } }));
      return;
    }
    if (request.method === 'POST' && path.endsWith('/messages/count_tokens')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ input_tokens: 10 }));
    } else if (request.method === 'POST' && path.endsWith('/messages')) {
      anthropic(body, response);
    } else if (request.method === 'POST' && path.endsWith('/responses')) {
      responses(body, response);
    } else if (request.method === 'GET' && path.endsWith('/models')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ object: 'list', data: [], models: [] }));
    } else {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { type: 'not_found_error', message: `no ${request.method} ${path} here` } }));
    }
  })().catch((error: unknown) => {
    log({ error: String(error) });
    if (!response.headersSent) response.writeHead(500);
    response.end();
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') writeFileSync(portFile, String(address.port));
});
