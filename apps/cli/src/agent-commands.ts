import { randomUUID } from 'node:crypto';
import {
  adviceFor,
  TASK_INTENTS,
  TASK_STATES,
  OPEN_STATES,
  RelayClient,
  RelayClientError,
  displayLine,
  holdLines,
  oneLine,
  searchHitText,
  taskText,
  type TaskArtifact,
  type TaskIntent,
  type TaskState,
  type TaskListItem,
  LiveInbox,
} from '@app/relay-client';
import { CliError, EXIT, usage } from './cli-errors';

/** The commands an agent runs with its own API key, against `POST /a2a`. */
export const AGENT_COMMANDS = ['send', 'inbox', 'sent', 'search', 'show', 'reply', 'accept', 'complete', 'decline', 'request-input', 'cancel'] as const;
export type AgentCommand = (typeof AGENT_COMMANDS)[number];

export const AGENT_USAGE = `Agent commands (authenticate with $AGENTRELAY_API_KEY or --api-key):
  send <recipient> "<text>" [--intent inform|ask_question|propose_action] [--diff <file>]…
           [--test "<command>"]… [--ref <path[:start-end]>]… [--link <url>]…
           [--action "<description>" --target a,b --rationale "<why>"] [--idempotency-key <key>]
           [--for <task>]
                                    hand off work; --diff reads a unified diff (e.g. git diff > x.patch);
                                    --for names the handoff you sent or received that this one serves
  inbox [--status pending,accepted] [--since <iso time>] [--limit <n>] [--watch [--interval <s>]]
                                    open handoffs addressed to you (default: pending, accepted,
                                    input_required) with unread counts; --watch follows the live
                                    inbox (--interval: how often to look while its stream is down)
  sent [--status completed] [--since <iso time>] [--limit <n>]
                                    handoffs you sent and where each stands
  search <words…> [--role recipient|sender|either] [--status completed] [--limit <n>]
                                    full-text search over your handoffs (message text, artifact
                                    names), best match first, matches marked «like this»
  show <task>                       the whole thread: messages, artifacts, result (marks it read)
  reply <task> "<text>" [--idempotency-key <key>]
                                    add a message to a thread
  accept <task> [--session <id>]    take on a pending handoff ($AGENTRELAY_SESSION_ID by default)
  complete <task> "<result summary>"
  decline <task> ["<reason>"]
  request-input <task> "<question>" ask the sender and wait for their reply
  cancel <task>                     withdraw a handoff you sent that is still pending
`;

export interface AgentValues {
  json?: boolean;
  url?: string;
  'api-key'?: string;
  intent?: string;
  diff?: string[];
  test?: string[];
  ref?: string[];
  link?: string[];
  action?: string;
  target?: string;
  rationale?: string;
  'idempotency-key'?: string;
  for?: string;
  session?: string;
  status?: string;
  since?: string;
  limit?: string;
  watch?: boolean;
  interval?: string;
  role?: string;
}

export interface AgentIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readFile(path: string): Promise<string>;
  /** Ends `inbox --watch` (Ctrl-C otherwise). */
  signal?: AbortSignal;
  /** How the person ran the CLI, for the commands hints suggest (`agentrelay` by default). */
  program?: string;
}

/** Relay errors by what they mean to a script: not found, a state conflict, a bad key or anything else. */
function exitCodeOf(error: RelayClientError): number {
  if (error.failure === 'unreachable') return EXIT.unreachable;
  switch (error.reason) {
    case 'unauthenticated':
      return EXIT.unauthorized;
    case 'recipient_not_found':
    case 'thread_not_found':
    case 'not_a_participant':
      return EXIT.notFound;
    case 'thread_terminal':
    case 'invalid_transition':
    case 'not_authorized_transition':
    case 'state_changed':
    case 'duplicate_idempotency_key':
      return EXIT.conflict;
    default:
      return EXIT.apiError;
  }
}

export function cliErrorOf(error: RelayClientError): CliError {
  const code = error.details.code !== undefined ? ` (${error.details.code})` : '';
  return new CliError(`${error.reason}${code}: ${error.message}\n${adviceFor(error)}`, exitCodeOf(error), {
    reason: error.reason,
    message: error.message,
    ...(error.details.code !== undefined ? { code: error.details.code } : {}),
    ...(error.details.data ? { data: error.details.data } : {}),
    what_to_do: adviceFor(error),
  });
}

function need(positionals: string[], index: number, what: string): string {
  const value = positionals[index];
  if (!value) throw usage(`Missing ${what}.`);
  return value;
}

function parseStates(value: string | undefined, fallback: readonly TaskState[] | undefined): TaskState[] | undefined {
  if (value === undefined) return fallback ? [...fallback] : undefined;
  const states = value
    .split(',')
    .map((state) => state.trim())
    .filter(Boolean);
  const wrong = states.find((state) => !(TASK_STATES as readonly string[]).includes(state));
  if (wrong !== undefined || states.length === 0) throw usage(`--status takes states from ${TASK_STATES.join(', ')} (comma-separated).`);
  return states as TaskState[];
}

function parseLimit(value: string | undefined, fallback = 50, max = fallback === 50 ? 200 : 100): number {
  if (value === undefined) return fallback;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw usage(`--limit must be an integer from 1 to ${max}.`);
  return limit;
}

function parseSince(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(Date.parse(value))) throw usage('--since must be an ISO 8601 time, e.g. 2026-04-25T10:00:00Z.');
  return value;
}

/** The file a unified diff changes (its `+++ b/…` line), else the diff file's own name. */
export function diffTarget(diff: string, fallback: string): string {
  const target = /^\+\+\+ (?:b\/)?(\S+)/m.exec(diff)?.[1];
  return target && target !== '/dev/null' ? target : (/^--- (?:a\/)?(\S+)/m.exec(diff)?.[1] ?? fallback);
}

async function artifactsFrom(values: AgentValues, io: AgentIo): Promise<TaskArtifact[]> {
  const artifacts: TaskArtifact[] = [];
  for (const file of values.diff ?? []) {
    let diff: string;
    try {
      diff = await io.readFile(file);
    } catch (error) {
      throw new CliError(`Cannot read ${file}: ${(error as Error).message}`, EXIT.usage);
    }
    if (diff.trim() === '') throw usage(`${file} is empty.`);
    artifacts.push({ type: 'file_diff', path: diffTarget(diff, file), diff });
  }
  for (const command of values.test ?? []) artifacts.push({ type: 'test_command', command });
  for (const ref of values.ref ?? []) {
    const match = /^(.*?):(\d+)(?:-(\d+))?$/.exec(ref);
    artifacts.push(
      match
        ? { type: 'file_ref', path: match[1], line_start: Number(match[2]), ...(match[3] ? { line_end: Number(match[3]) } : {}) }
        : { type: 'file_ref', path: ref },
    );
  }
  for (const url of values.link ?? []) artifacts.push({ type: 'link', url });
  return artifacts;
}

/** A table of text cells; every cell goes through displayLine, so another party's text can neither break nor overwrite a row. */
function table(rows: string[][]): string {
  const cells = rows.map((row) => row.map(displayLine));
  const widths = cells[0].map((_, column) => Math.max(...cells.map((row) => row[column].length)));
  return (
    cells
      .map((row) =>
        row
          .map((cell, column) => cell.padEnd(widths[column]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** A held handoff's state with the rule that holds it (only its sender sees it held). */
function stateCell(item: TaskListItem): string {
  return item.status.state === 'held' && item.hold ? `held (rule ${item.hold.rule})` : item.status.state;
}

function taskTable(items: TaskListItem[], role: 'recipient' | 'sender', program: string): string {
  const unread = items.reduce((sum, item) => sum + item.unread_messages, 0);
  const rows = items.map((item) => [
    item.task_id,
    stateCell(item),
    role === 'recipient' ? item.sender.handle : (item.recipient ?? '-'),
    item.intent,
    String(item.unread_messages),
    item.updated_at,
    oneLine(item.summary_preview, 60),
  ]);
  const header = ['TASK', 'STATE', role === 'recipient' ? 'FROM' : 'TO', 'INTENT', 'UNREAD', 'UPDATED', 'SUMMARY'];
  const held = items.some((item) => item.status.state === 'held')
    ? `Held handoffs wait for a person with the approver role; "${program} show <task>" says which rule held one and until when.\n`
    : '';
  return `${table([header, ...rows])}${items.length} thread${items.length === 1 ? '' : 's'}, ${unread} unread message${unread === 1 ? '' : 's'}.\n${held}`;
}

function fingerprint(item: TaskListItem): string {
  return `${item.status.state}|${item.updated_at}|${item.unread_messages}`;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * `inbox --watch`: prints the inbox, then a line per task that arrives, changes or leaves it,
 * looking again whenever the live inbox (`tasks/watch`) reports a change, and every `intervalMs`
 * while that stream is down, until stopped.
 */
async function watchInbox(
  client: RelayClient,
  filter: { status?: TaskState[]; since?: string },
  intervalMs: number,
  json: boolean,
  io: AgentIo,
): Promise<number> {
  const known = new Map<string, TaskListItem>();
  let first = true;
  const live = new LiveInbox(client, intervalMs, (error) =>
    io.stderr(`agentrelay: the live inbox stream failed (${(error as Error).message}); polling every ${intervalMs / 1000} s until it is back\n`),
  );
  live.start();
  try {
    await live.opened(10_000);
    await watchLoop();
  } finally {
    live.stop();
  }
  return EXIT.ok;

  async function watchLoop(): Promise<void> {
    while (!io.signal?.aborted) {
      let items: TaskListItem[];
      try {
        items = await client.listAllTasks({ role: 'recipient', ...filter, limit: 200 });
      } catch (error) {
        if (!(error instanceof RelayClientError) || !error.transient) throw error;
        io.stderr(`agentrelay: ${error.message} (retrying in ${intervalMs / 1000} s)\n`);
        await sleep(intervalMs, io.signal);
        continue;
      }
      const events: Array<{ event: 'new' | 'changed' | 'gone'; task: TaskListItem }> = [];
      for (const item of items) {
        const before = known.get(item.task_id);
        if (!before) events.push({ event: 'new', task: item });
        else if (fingerprint(before) !== fingerprint(item)) events.push({ event: 'changed', task: item });
      }
      const present = new Set(items.map((item) => item.task_id));
      for (const [taskId, item] of known) if (!present.has(taskId)) events.push({ event: 'gone', task: item });
      known.clear();
      for (const item of items) known.set(item.task_id, item);

      if (first) {
        if (json) for (const item of items) io.stdout(`${JSON.stringify({ event: 'present', task: item })}\n`);
        else
          io.stdout(
            `${items.length ? taskTable(items, 'recipient', io.program ?? 'agentrelay') : 'No matching handoffs.\n'}Watching for changes live (Ctrl-C to stop).\n`,
          );
        first = false;
      } else {
        for (const { event, task } of events) {
          io.stdout(
            json
              ? `${JSON.stringify({ event, task })}\n`
              : `${new Date().toISOString()} ${event.padEnd(7)} ${task.task_id} [${task.status.state}] from ${displayLine(task.sender.handle)}, ${task.unread_messages} unread: ${oneLine(task.summary_preview, 60)}\n`,
          );
        }
      }
      await live.changed(intervalMs, io.signal);
    }
  }
}

/** Runs one agent command; relay failures become CliErrors with the exit code of their kind. */
export async function runAgentCommand(
  command: AgentCommand,
  positionals: string[],
  values: AgentValues,
  env: Record<string, string | undefined>,
  io: AgentIo,
): Promise<number> {
  const apiKey = values['api-key'] ?? env.AGENTRELAY_API_KEY;
  if (!apiKey) throw new CliError('No API key: set AGENTRELAY_API_KEY (your agent key, ah_live_…) or pass --api-key.', EXIT.usage);
  const client = new RelayClient({ url: values.url ?? env.RELAY_URL ?? 'http://127.0.0.1:8080', apiKey });
  const json = values.json === true;
  const program = io.program ?? 'agentrelay';
  const print = (value: unknown, human: string): void => io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : human);
  try {
    switch (command) {
      case 'send': {
        const recipient = need(positionals, 0, 'the recipient (name@org)');
        const text = need(positionals, 1, 'the message text');
        const intent = (values.intent ?? (values.action ? 'propose_action' : 'inform')) as TaskIntent;
        if (!(TASK_INTENTS as readonly string[]).includes(intent)) throw usage(`--intent must be one of ${TASK_INTENTS.join(', ')}.`);
        if (intent === 'propose_action' && (!values.action || !values.rationale))
          throw usage('--intent propose_action needs --action "<description>" and --rationale "<why>" (and --target a,b).');
        const created = await client.createTask({
          recipient,
          text,
          intent,
          ...(intent === 'propose_action'
            ? {
                proposedAction: {
                  description: values.action as string,
                  rationale: values.rationale as string,
                  target_files: (values.target ?? '')
                    .split(',')
                    .map((path) => path.trim())
                    .filter(Boolean),
                },
              }
            : {}),
          artifacts: await artifactsFrom(values, io),
          idempotencyKey: values['idempotency-key'] ?? randomUUID(),
          ...(values.for !== undefined ? { parentTaskId: values.for } : {}),
        });
        const chained = created.chain?.parent_task_id ? `, for ${created.chain.parent_task_id} at depth ${created.chain.depth}` : '';
        print(
          { ...created, recipient },
          `Sent handoff ${created.task_id} to ${recipient} (${created.status.state}${chained}).\n` +
            (created.hold ? `${holdLines(created.hold).join('\n')}\n` : '') +
            `To retry safely, repeat the command with --idempotency-key ${created.idempotency_key}\n`,
        );
        return EXIT.ok;
      }
      case 'inbox':
      case 'sent': {
        const role = command === 'inbox' ? 'recipient' : 'sender';
        const status = parseStates(values.status, role === 'recipient' ? OPEN_STATES : undefined);
        const since = parseSince(values.since);
        if (values.watch) {
          if (command !== 'inbox') throw usage('--watch works with inbox.');
          const interval = values.interval === undefined ? 5 : Number(values.interval);
          if (!Number.isFinite(interval) || interval < 0.2 || interval > 3600) throw usage('--interval is in seconds, from 0.2 to 3600.');
          return await watchInbox(client, { ...(status ? { status } : {}), ...(since ? { since } : {}) }, interval * 1000, json, io);
        }
        const page = await client.listTasks({ role, ...(status ? { status } : {}), ...(since ? { since } : {}), limit: parseLimit(values.limit) });
        const unread = page.items.reduce((sum, item) => sum + item.unread_messages, 0);
        print(
          { items: page.items, total_unread: unread, next_cursor: page.next_cursor },
          page.items.length ? taskTable(page.items, role, program) : role === 'recipient' ? 'No handoffs in your inbox.\n' : 'No handoffs sent.\n',
        );
        return EXIT.ok;
      }
      case 'search': {
        const query = positionals.join(' ').trim();
        if (query === '') throw usage(`search needs the words to look for, e.g. ${program} search users API.`);
        const role = values.role ?? 'either';
        if (role !== 'recipient' && role !== 'sender' && role !== 'either') throw usage('--role must be recipient, sender or either.');
        const status = parseStates(values.status, undefined);
        const page = await client.searchTasks(query, { role, ...(status ? { status } : {}), limit: parseLimit(values.limit, 20) });
        print(
          { items: page.items, next_cursor: page.next_cursor },
          page.items.length ? `${page.items.map(searchHitText).join('\n')}\n` : `No handoffs match "${query}".\n`,
        );
        return EXIT.ok;
      }
      case 'show': {
        const task = await client.getTask(need(positionals, 0, 'the task id'));
        print(task, taskText(task, { full: true }));
        return EXIT.ok;
      }
      case 'reply': {
        const taskId = need(positionals, 0, 'the task id');
        const appended = await client.appendMessage(taskId, need(positionals, 1, 'the message text'), values['idempotency-key'] ?? randomUUID());
        print(appended, `Replied in ${appended.task_id} (message #${appended.sequence_no}).\n`);
        return EXIT.ok;
      }
      case 'accept': {
        const sessionId = values.session ?? env.AGENTRELAY_SESSION_ID;
        const result = await client.transition(need(positionals, 0, 'the task id'), 'accept', sessionId ? { sessionId } : {});
        print(result, `Accepted ${result.task_id}: read it with "${program} show ${result.task_id}".\n`);
        return EXIT.ok;
      }
      case 'complete': {
        const taskId = need(positionals, 0, 'the task id');
        const result = await client.transition(taskId, 'complete', { resultSummary: need(positionals, 1, 'the result summary') });
        print(result, `Completed ${result.task_id}.\n`);
        return EXIT.ok;
      }
      case 'decline': {
        const taskId = need(positionals, 0, 'the task id');
        const result = await client.transition(taskId, 'decline', positionals[1] ? { reason: positionals[1] } : {});
        print(result, `Declined ${result.task_id} (${result.status.state}).\n`);
        return EXIT.ok;
      }
      case 'request-input': {
        const taskId = need(positionals, 0, 'the task id');
        const result = await client.transition(taskId, 'request_input', { text: need(positionals, 1, 'the question') });
        print(result, `Asked the sender of ${result.task_id}; it waits for their reply (${result.status.state}).\n`);
        return EXIT.ok;
      }
      case 'cancel': {
        const result = await client.cancel(need(positionals, 0, 'the task id'));
        print(result, `Cancelled ${result.task_id}.\n`);
        return EXIT.ok;
      }
    }
  } catch (error) {
    if (error instanceof RelayClientError) throw cliErrorOf(error);
    throw error;
  }
}
