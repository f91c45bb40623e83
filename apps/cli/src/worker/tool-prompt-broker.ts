import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TOOL_PROMPT_CLIENTS, TOOL_PROMPT_EVENTS, type ToolPromptClient, type ToolPromptEvent } from '@app/contracts/model';
import type { ToolPromptAsker } from '../hooks/tool-prompt-asker';

/** A hook's request body at most this large. */
const BODY_MAX_BYTES = 256 * 1024;

interface RunPrompts {
  taskId: string;
  /** Aborted when the run ends: its waiting questions are denied. */
  ended: AbortController;
}

/** Whether a tool name matches one of the patterns (exact names; `*` matches any run of characters). */
export function toolIsPreApproved(toolName: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`).test(toolName));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The pre-approved tools of `--allow-tools` (a comma-separated list; '' for none). */
export function parseAllowTools(value: string): string[] {
  return value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

function reply(response: ServerResponse, status: number, body: Record<string, unknown>): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * The worker's local endpoint for its runs' permission hooks (`agentrelay hook permission`): a
 * loopback HTTP server, one unguessable path per run. A tool of `allowTools` passes at once (the
 * client's own rules decide); any other is asked on the run's handoff, and the request is answered
 * once the sender did or the deadline passed. The API key stays in the worker: the command and its
 * hooks never hold it.
 */
export class ToolPromptBroker {
  private server: Server | null = null;
  private port = 0;
  private readonly runs = new Map<string, RunPrompts>();

  constructor(
    private readonly asker: ToolPromptAsker,
    private readonly allowTools: readonly string[],
  ) {}

  async start(): Promise<void> {
    const server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const run of this.runs.values()) run.ended.abort();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The URL a run's hooks call; `release` when the run ended. */
  register(taskId: string): { url: string; release(): void } {
    const token = randomBytes(24).toString('hex');
    const run: RunPrompts = { taskId, ended: new AbortController() };
    this.runs.set(token, run);
    return {
      url: `http://127.0.0.1:${this.port}/runs/${token}`,
      release: () => {
        run.ended.abort();
        this.runs.delete(token);
      },
    };
  }

  nudge(taskId: string): void {
    this.asker.nudge(taskId);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const token = /^\/runs\/([0-9a-f]{48})$/.exec(request.url ?? '')?.[1];
    const run = token ? this.runs.get(token) : undefined;
    if (request.method !== 'POST' || !run) return reply(response, 404, { error: 'no such run' });
    let body: Record<string, unknown>;
    try {
      body = await readBody(request);
    } catch (error) {
      return reply(response, 400, { error: (error as Error).message });
    }
    const { client, event, tool_name: toolName } = body;
    if (typeof client !== 'string' || !(TOOL_PROMPT_CLIENTS as readonly string[]).includes(client))
      return reply(response, 400, { error: 'client is not known' });
    if (typeof event !== 'string' || !(TOOL_PROMPT_EVENTS as readonly string[]).includes(event)) return reply(response, 400, { error: 'event is not known' });
    if (typeof toolName !== 'string' || toolName === '') return reply(response, 400, { error: 'tool_name is required' });
    if (toolIsPreApproved(toolName, this.allowTools)) return reply(response, 200, { decision: 'pass' });
    const outcome = await this.asker.ask(
      run.taskId,
      { client: client as ToolPromptClient, event: event as ToolPromptEvent, toolName, toolInput: body.tool_input ?? null },
      run.ended.signal,
    );
    reply(response, 200, { decision: outcome.decision, reason: outcome.reason });
  }
}

function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_MAX_BYTES) {
        reject(new Error(`the hook input is larger than ${BODY_MAX_BYTES} bytes`));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('error', reject);
    request.on('end', () => {
      try {
        const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return reject(new Error('the body is not a JSON object'));
        resolve(value as Record<string, unknown>);
      } catch {
        reject(new Error('the body is not JSON'));
      }
    });
  });
}
