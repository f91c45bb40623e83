import { randomUUID } from 'node:crypto';
import { RelayClientError } from './relay-client-error';
import type {
  AgentCard,
  AppendedMessage,
  CancelResult,
  CreatedTask,
  TaskArtifact,
  TaskIntent,
  TaskState,
  TaskTransition,
  InboxEvent,
  ProposedAction,
  Task,
  TaskListItem,
  TaskPage,
  SearchPage,
  TransitionResult,
} from './relay-types';
import { retryTransient } from './transient-retry';

export interface RelayClientOptions {
  /** Base URL of the relay's edge, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The calling agent's API key (ah_live_…). */
  apiKey: string;
  /** How long one HTTP request may take (default 30 s). */
  timeoutMs?: number;
  /** Extra attempts of a call that is safe to repeat after a transient failure (default 2). */
  retries?: number;
  /** The wait before the first retry (default 250 ms); each later one is four times longer, up to 3 s. */
  retryDelayMs?: number;
  fetch?: typeof fetch;
}

export interface NewTask {
  recipient: string;
  text: string;
  intent?: TaskIntent;
  proposedAction?: ProposedAction;
  artifacts?: TaskArtifact[];
  /** Sent as `metadata.client_idempotency_key`: the relay creates one task per key, however often the call is repeated. */
  idempotencyKey?: string;
  /** The handoff this one serves (`parent_task_id`, docs/chains.md): one the caller sent or received. */
  parentTaskId?: string;
}

export interface TaskFilter {
  role: 'recipient' | 'sender';
  status?: TaskState[];
  /** ISO 8601: only tasks created or updated after this time. */
  since?: string;
  limit?: number;
  cursor?: string | null;
}

export interface SearchFilter {
  role?: 'recipient' | 'sender' | 'either';
  status?: TaskState[];
  limit?: number;
  cursor?: string | null;
}

export interface TransitionOptions {
  sessionId?: string;
  resultSummary?: string;
  reason?: string;
  /** A message to append with the transition (required by request_input). */
  text?: string;
}

interface JsonRpcResponse {
  jsonrpc?: string;
  result?: unknown;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

const DEFAULT_RETRY_DELAY_MS = 250;
const RETRY_FACTOR = 4;
const MAX_RETRY_DELAY_MS = 3000;
/** A relay that asks to be left alone for longer than this gets the error back instead of a waiting caller. */
const MAX_RETRY_AFTER_MS = 10_000;

/**
 * A small typed client of the relay's public API: AgentRelay JSON-RPC on `POST /a2a` and the
 * public agent cards. Every failure is a RelayClientError naming the relay's error symbol.
 */
export class RelayClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private nextRequestId = 1;

  constructor(private readonly options: RelayClientOptions) {
    this.baseUrl = options.url.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? fetch;
  }

  get url(): string {
    return this.baseUrl;
  }

  /** Creates a task. Without an idempotency key one is made, so the client's own retries stay safe. */
  async createTask(task: NewTask): Promise<CreatedTask & { idempotency_key: string }> {
    const idempotencyKey = task.idempotencyKey ?? randomUUID();
    const params: Record<string, unknown> = {
      recipient: task.recipient,
      intent: task.intent ?? 'inform',
      message: { role: 'user', parts: [{ type: 'text', text: task.text }] },
      artifacts: task.artifacts ?? [],
      proposed_action: task.proposedAction ?? null,
      metadata: { client_idempotency_key: idempotencyKey },
      ...(task.parentTaskId !== undefined ? { parent_task_id: task.parentTaskId } : {}),
    };
    const created = await this.call<CreatedTask>('message/send', params, true);
    return { ...created, idempotency_key: idempotencyKey };
  }

  /** Appends a message to a task (either participant). */
  async appendMessage(taskId: string, text: string, idempotencyKey: string = randomUUID()): Promise<AppendedMessage & { idempotency_key: string }> {
    const appended = await this.call<AppendedMessage>(
      'message/send',
      { task_id: taskId, message: { parts: [{ type: 'text', text }] }, metadata: { client_idempotency_key: idempotencyKey } },
      true,
    );
    return { ...appended, idempotency_key: idempotencyKey };
  }

  /**
   * The task with its artifacts and the messages that fit one reply (after `afterSequenceNo`
   * when given); reading it marks it read for the caller.
   */
  getTask(taskId: string, afterSequenceNo?: number): Promise<Task> {
    return this.call<Task>('tasks/get', { task_id: taskId, ...(afterSequenceNo !== undefined ? { after_sequence_no: afterSequenceNo } : {}) }, true);
  }

  listTasks(filter: TaskFilter): Promise<TaskPage> {
    return this.call<TaskPage>(
      'tasks/list',
      {
        filter: { role: filter.role, ...(filter.status?.length ? { status: filter.status } : {}), ...(filter.since ? { since: filter.since } : {}) },
        page: { limit: filter.limit ?? 50, cursor: filter.cursor ?? null },
      },
      true,
    );
  }

  /** Full-text search over the caller's own tasks (message text and artifact names), best match first. */
  searchTasks(query: string, filter: SearchFilter = {}): Promise<SearchPage> {
    return this.call<SearchPage>(
      'tasks/search',
      {
        query,
        filter: { ...(filter.role ? { role: filter.role } : {}), ...(filter.status?.length ? { status: filter.status } : {}) },
        page: { ...(filter.limit !== undefined ? { limit: filter.limit } : {}), cursor: filter.cursor ?? null },
      },
      true,
    );
  }

  /** Every task matching the filter, following `next_cursor` up to `maxItems`. */
  async listAllTasks(filter: Omit<TaskFilter, 'cursor'>, maxItems = 1000): Promise<TaskListItem[]> {
    const items: TaskListItem[] = [];
    let cursor: string | null = null;
    do {
      const page: TaskPage = await this.listTasks({ ...filter, limit: Math.min(filter.limit ?? 200, maxItems - items.length), cursor });
      items.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor && items.length < maxItems);
    return items;
  }

  /** `tasks/update`: accept, complete, decline, fail, request_input (the recipient) or cancel (the sender). */
  transition(taskId: string, transition: TaskTransition, options: TransitionOptions = {}): Promise<TransitionResult> {
    return this.call<TransitionResult>('tasks/update', {
      task_id: taskId,
      transition,
      ...(options.sessionId !== undefined ? { session_id: options.sessionId } : {}),
      ...(options.resultSummary !== undefined ? { result_summary: options.resultSummary } : {}),
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
      ...(options.text !== undefined ? { message: { parts: [{ type: 'text', text: options.text }] } } : {}),
    });
  }

  /** `tasks/cancel`: the sender withdraws a task that is still pending. */
  cancel(taskId: string): Promise<CancelResult> {
    return this.call<CancelResult>('tasks/cancel', { task_id: taskId });
  }

  /** The public card of an agent, or null when no enabled agent has that handle. */
  async agentCard(handle: string): Promise<AgentCard | null> {
    const response = await this.send(`${this.baseUrl}/.well-known/agent-card.json?id=${encodeURIComponent(handle)}`, {
      method: 'GET',
      headers: { accept: 'application/json' },
    });
    if (response.status === 404) return null;
    const body = await readJson(response);
    if (!response.ok) {
      const error = (body as { error?: { reason?: string; message?: string } } | undefined)?.error;
      throw new RelayClientError('relay_error', error?.reason ?? `http_${response.status}`, error?.message ?? `The relay answered HTTP ${response.status}`, {
        httpStatus: response.status,
      });
    }
    return body as AgentCard;
  }

  /** One JSON-RPC call on `POST /a2a`; `repeatable` calls are retried after transient failures. */
  call<T>(method: string, params: Record<string, unknown>, repeatable = false): Promise<T> {
    return retryTransient(() => this.callOnce<T>(method, params), {
      retries: repeatable ? (this.options.retries ?? 2) : 0,
      minDelayMs: this.options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
      factor: RETRY_FACTOR,
      maxDelayMs: MAX_RETRY_DELAY_MS,
      maxRetryAfterMs: MAX_RETRY_AFTER_MS,
    });
  }

  private async callOnce<T>(method: string, params: Record<string, unknown>): Promise<T> {
    const id = this.nextRequestId++;
    const response = await this.send(`${this.baseUrl}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const body = (await readJson(response)) as JsonRpcResponse | undefined;
    this.throwIfError(response, body);
    return (body as JsonRpcResponse).result as T;
  }

  /**
   * The calling agent's live inbox (`tasks/watch`): a `ready` event, or with `lastEventId` the
   * events missed since that id, then every event of every task the agent takes part in, until
   * `signal` aborts or the relay ends the stream (its `RELAY_STREAM_MAX_MS`); watch again with the
   * last id to go on without a gap.
   */
  async *watchInbox(options: { lastEventId?: string; signal?: AbortSignal; onOpen?: () => void } = {}): AsyncGenerator<InboxEvent> {
    const id = this.nextRequestId++;
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}/a2a`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...(options.lastEventId !== undefined ? { 'last-event-id': options.lastEventId } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tasks/watch', params: {} }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) return;
      throw new RelayClientError('unreachable', 'unreachable', `Cannot reach the relay at ${this.baseUrl}: ${(error as Error).message}`);
    }
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream') || !response.body) {
      this.throwIfError(response, (await readJson(response)) as JsonRpcResponse | undefined);
      throw new RelayClientError('bad_response', 'bad_response', `The relay answered HTTP ${response.status} without an event stream`, {
        httpStatus: response.status,
      });
    }
    options.onOpen?.();
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (options.signal?.aborted) return;
          throw new RelayClientError('unreachable', 'unreachable', `The inbox stream from ${this.baseUrl} broke: ${(error as Error).message}`);
        }
        if (chunk.done) return;
        buffer = (buffer + decoder.decode(chunk.value, { stream: true })).replace(/\r\n/g, '\n');
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let eventId: string | undefined;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('id:')) eventId = line.slice(3).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
          }
          if (data.length === 0) continue;
          const message = JSON.parse(data.join('\n')) as JsonRpcResponse;
          this.throwIfError(response, message);
          yield { ...(message.result as Omit<InboxEvent, 'id'>), id: eventId ?? '' } as InboxEvent;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  private throwIfError(response: Response, body: JsonRpcResponse | undefined): void {
    const retryAfter = Number(response.headers.get('retry-after'));
    if (body?.error) {
      const { code, message, data } = body.error;
      const reason = typeof data?.reason === 'string' ? data.reason : response.status === 401 ? 'unauthenticated' : `code_${code}`;
      throw new RelayClientError('relay_error', reason, message, {
        code,
        httpStatus: response.status,
        ...(data ? { data } : {}),
        ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
      });
    }
    if (response.status === 401) throw new RelayClientError('relay_error', 'unauthenticated', 'Missing or invalid API key', { httpStatus: 401 });
    if (!response.ok || body === undefined || !('result' in body)) {
      throw new RelayClientError('bad_response', 'bad_response', `The relay answered HTTP ${response.status} without a JSON-RPC result`, {
        httpStatus: response.status,
      });
    }
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetchImpl(url, { ...init, signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new RelayClientError('unreachable', 'unreachable', `Cannot reach the relay at ${this.baseUrl}: ${detail}`);
    }
  }
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
