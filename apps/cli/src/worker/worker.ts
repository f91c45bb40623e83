import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RelayClient, RelayClientError, retryTransient, type InboxEvent, type TaskListItem, type Task } from '@app/relay-client';
import { LEASE_SLACK_SECONDS, marker, runIsAbandoned, standingOf, type Liveness, type Standing, type WorkerMarker } from './claims';
import { describeDuration as duration, ToolPromptAsker } from '../hooks/tool-prompt-asker';
import { TOOL_PROMPT_URL_ENV } from '../hooks/tool-prompt-hook';
import {
  CLAUDE_SETTINGS_ENV,
  claudeToolPromptSettings,
  clientHookTimeoutSeconds,
  CODEX_HOOKS_ENV,
  codexToolPromptOverride,
  shellWord,
} from '../hooks/tool-prompt-config';
import { failReason } from './output';
import { ProgressCoalescer } from './progress';
import { RequestBudget } from './request-budget';
import { runCommand, type CommandOutcome } from './run-command';
import { collectArtifacts, heldArtifacts, INPUT_FILE, writeTaskFiles, type OutputArtifact } from './task-files';
import { ToolPromptBroker } from './tool-prompt-broker';

/** How the command's coding agent asks for tools it is not allowed yet (docs/agents.md#tool-prompts-from-a-worker). */
export interface ToolPromptOptions {
  /** How long a question waits for the sender's answer; no answer denies. */
  timeoutMs: number;
  /** Tools that pass without a question (the client's own rules decide them). */
  allowTools: string[];
  /** The words that start this CLI (`<node> [flags] <main>`): the hook is `… hook permission`. */
  cliCommand: string[];
  /** How often a waiting question reads the task besides the inbox's events. */
  pollMs?: number;
}

export interface WorkerOptions {
  url: string;
  apiKey: string;
  /** Run through the shell for each handoff. */
  command: string;
  concurrency: number;
  timeoutMs: number;
  /** Where the per-run directories go; the system's temp directory (and then removed after the run) when null. */
  workdir: string | null;
  progressIntervalMs: number;
  requestsPerMinute: number;
  sessionId: string;
  host: string;
  /** The environment the command inherits (the worker's own, without its API key). */
  env: Record<string, string>;
  log(line: string): void;
  /** How often the inbox is listed again besides the live stream's events. */
  sweepIntervalMs?: number;
  killGraceMs?: number;
  /** How long to wait before opening a broken live inbox stream again. */
  reconnectMs?: number;
  processExists?(pid: number): boolean;
  toolPrompts: ToolPromptOptions;
}

/** At most this many progress updates per run (each is a message; a task holds at most 500). */
export const MAX_PROGRESS_UPDATES = 50;
const PROGRESS_MAX_CHARS = 4000;
/** The run's files for the coding agent's hooks, inside its directory. */
const HOOKS_DIR = '.agentrelay';
const CLAUDE_SETTINGS_FILE = 'claude-settings.json';
/** An environment variable's value at most this long (one argument string of Linux is at most 128 KiB). */
const ENV_TEXT_MAX_CHARS = 32 * 1024;
const CONFLICTS = [
  'invalid_transition',
  'state_changed',
  'not_authorized_transition',
  'thread_terminal',
  'unsupported_operation',
  'thread_not_found',
  'not_a_participant',
];
/** A call that moves a task is retried this often, after 1 s, 2 s, 4 s, … up to 30 s between two (some four minutes in all). */
const ESSENTIAL_RETRY = { retries: 12, minDelayMs: 1000, factor: 2, maxDelayMs: 30_000 };

type QueueKind = 'pending' | 'check' | 'resume';

interface RunningTask {
  controller: AbortController;
  /** Why the run was stopped early. */
  stopReason: 'cancelled' | 'forced' | null;
}

function isConflict(error: unknown): boolean {
  return error instanceof RelayClientError && CONFLICTS.includes(error.reason);
}

function lostMessageIdRace(error: unknown): boolean {
  if (!(error instanceof RelayClientError) || error.reason !== 'invalid_params') return false;
  return /message_?id/i.test(String(error.details.data?.field ?? ''));
}

function defaultProcessExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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
 * `agentrelay worker`: follows the agent's live inbox, accepts the handoffs addressed to it (the
 * accept is the lock between workers of one handle), runs the command for each and completes,
 * fails or asks for input with what the command did (apps/cli/README.md#headless-worker).
 */
export class Worker {
  private readonly client: RelayClient;
  /** The same API for progress updates, whose budget token is taken before the call. */
  private readonly spareClient: RelayClient;
  private readonly budget: RequestBudget;
  private readonly running = new Map<string, RunningTask>();
  private readonly claiming = new Set<string>();
  private readonly queue = new Map<string, QueueKind>();
  /** What the last look at an accepted task found, by its `updated_at`: spares reading it again. */
  private readonly seen = new Map<string, { updatedAt: string; standing: Standing }>();
  private readonly stopController = new AbortController();
  private readonly leaseSeconds: number;
  private readonly liveness: Liveness;
  private readonly toolPrompts: ToolPromptBroker;
  private handle: string | null = null;
  private wakeUp: (() => void) | null = null;
  private scanWanted = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: WorkerOptions) {
    this.budget = new RequestBudget(options.requestsPerMinute);
    const budgeted: typeof fetch = async (input, init) => {
      await this.budget.take();
      return fetch(input, init);
    };
    this.client = new RelayClient({ url: options.url, apiKey: options.apiKey, fetch: budgeted });
    this.spareClient = new RelayClient({ url: options.url, apiKey: options.apiKey, retries: 0 });
    const asker = new ToolPromptAsker(new RelayClient({ url: options.url, apiKey: options.apiKey, fetch: budgeted }), {
      timeoutMs: options.toolPrompts.timeoutMs,
      pollMs: options.toolPrompts.pollMs ?? 5000,
      log: (line) => options.log(`worker: ${line}`),
    });
    this.toolPrompts = new ToolPromptBroker(asker, options.toolPrompts.allowTools);
    const killGraceMs = options.killGraceMs ?? 10_000;
    this.leaseSeconds = Math.ceil((options.timeoutMs + killGraceMs) / 1000) + LEASE_SLACK_SECONDS;
    const processExists = options.processExists ?? defaultProcessExists;
    this.liveness = {
      sessionId: options.sessionId,
      host: options.host,
      holds: (taskId) => this.running.has(taskId) || this.claiming.has(taskId),
      processExists,
      now: Date.now,
    };
  }

  get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  /** Runs until `stop()`, then waits for the running commands and returns. */
  async run(): Promise<void> {
    const signal = this.stopController.signal;
    this.options.log(
      `worker ${this.options.sessionId}: running "${this.options.command}" for each handoff (concurrency ${this.options.concurrency}, timeout ${duration(this.options.timeoutMs)})`,
    );
    await this.toolPrompts.start();
    const follower = this.followInbox(signal);
    const sweeper = setInterval(() => this.requestScan(), this.options.sweepIntervalMs ?? 60_000);
    this.requestScan();
    try {
      await this.dispatch(signal);
    } finally {
      clearInterval(sweeper);
      await follower;
    }
    if (this.running.size > 0) this.options.log(`worker: stopping; waiting for ${this.running.size} running task(s) to end`);
    while (this.running.size > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    await this.toolPrompts.stop();
    this.options.log('worker: stopped');
  }

  /** Takes no new tasks; running ones finish (within their timeout). */
  stop(): void {
    this.stopController.abort();
    this.wake();
  }

  /** Stops the running commands now; their tasks are failed saying so. */
  stopNow(): void {
    this.stop();
    for (const runningTask of this.running.values()) {
      runningTask.stopReason ??= 'forced';
      runningTask.controller.abort();
    }
  }

  private wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = null;
    wake?.();
  }

  private requestScan(): void {
    this.scanWanted = true;
    this.wake();
  }

  private enqueue(taskId: string, kind: QueueKind): void {
    const current = this.queue.get(taskId);
    if (current === 'pending' || current === 'resume') return;
    this.queue.set(taskId, kind);
    this.wake();
  }

  private freeSlot(): boolean {
    return this.running.size + this.claiming.size < this.options.concurrency;
  }

  private next(): [string, QueueKind] | null {
    for (const entry of this.queue) if (entry[1] === 'check') return entry;
    if (!this.freeSlot()) return null;
    for (const entry of this.queue) return entry;
    return null;
  }

  private async dispatch(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (this.scanWanted) {
        this.scanWanted = false;
        await this.scan().catch((error: unknown) => this.options.log(`worker: listing the inbox failed: ${(error as Error).message}`));
        continue;
      }
      const next = this.next();
      if (!next) {
        await new Promise<void>((resolve) => (this.wakeUp = resolve));
        continue;
      }
      const [taskId, kind] = next;
      this.queue.delete(taskId);
      try {
        if (kind === 'pending') await this.take(taskId);
        else if (kind === 'check') await this.check(taskId, null);
        else await this.resume(taskId);
      } catch (error) {
        this.options.log(`worker: ${taskId}: ${(error as Error).message}`);
      }
    }
  }

  /** Pending handoffs to take and accepted ones to look after: at start, after each reconnect, and every sweep. */
  private async scan(): Promise<void> {
    const pending = await this.client.listAllTasks({ role: 'recipient', status: ['pending'], limit: 200 });
    for (const item of [...pending].reverse()) this.enqueue(item.task_id, 'pending');
    const accepted = await this.client.listAllTasks({ role: 'recipient', status: ['accepted'], limit: 200 });
    const open = new Set(accepted.map((item) => item.task_id));
    for (const taskId of this.seen.keys()) if (!open.has(taskId)) this.seen.delete(taskId);
    for (const item of accepted) {
      if (this.liveness.holds(item.task_id)) continue;
      await this.check(item.task_id, item).catch((error: unknown) => this.options.log(`worker: ${item.task_id}: ${(error as Error).message}`));
    }
  }

  private handleEvent(event: InboxEvent): void {
    if (!event.task_id) return;
    if (this.handle !== null && event.recipient !== undefined && event.recipient !== this.handle) return;
    this.toolPrompts.nudge(event.task_id);
    switch (event.event) {
      case 'created':
        if (event.status?.state === 'pending') this.enqueue(event.task_id, 'pending');
        break;
      case 'accepted':
        // An accept that carries the recipient's message is a worker's take (the taker runs it);
        // otherwise the task is back from input-required after the sender's answer, or a person took it.
        if (event.message && event.message.from === event.recipient) break;
        if (!this.liveness.holds(event.task_id)) this.enqueue(event.task_id, 'check');
        break;
      case 'canceled': {
        const runningTask = this.running.get(event.task_id);
        if (runningTask) {
          this.options.log(`worker: ${event.task_id}: cancelled by the sender; stopping its command`);
          runningTask.stopReason = 'cancelled';
          runningTask.controller.abort();
        }
        break;
      }
    }
  }

  /** Follows `tasks/watch`; each (re)opened stream triggers a scan, so nothing sent meanwhile is missed. */
  private async followInbox(signal: AbortSignal): Promise<void> {
    let lastEventId: string | undefined;
    while (!signal.aborted) {
      try {
        const onOpen = (): void => this.requestScan();
        for await (const event of this.client.watchInbox({ lastEventId, signal, onOpen })) {
          lastEventId = event.id || lastEventId;
          if (event.event !== 'ready') this.handleEvent(event);
        }
      } catch (error) {
        // A refused resume id starts afresh: the scan on open finds what came meanwhile.
        if (error instanceof RelayClientError && error.refusedResumeId) lastEventId = undefined;
        if (!signal.aborted) this.options.log(`worker: the live inbox stream failed (${(error as Error).message}); opening it again`);
      }
      await sleep(this.options.reconnectMs ?? 5000, signal);
    }
  }

  /** A relay call that moves a task: retried while the relay is unreachable, overloaded or rate limited. */
  private essential<T>(call: () => Promise<T>): Promise<T> {
    return retryTransient(call, {
      ...ESSENTIAL_RETRY,
      onRetry: (error, waitMs) => this.options.log(`worker: ${error.message} (retrying in ${Math.round(waitMs / 1000)} s)`),
    });
  }

  /** The task with all its messages (tasks/get pages them). */
  private async wholeTask(taskId: string): Promise<Task> {
    const task = await this.essential(() => this.client.getTask(taskId));
    while (task.has_more_messages && task.next_after_sequence_no !== null) {
      const after = task.next_after_sequence_no;
      const page = await this.essential(() => this.client.getTask(taskId, after));
      task.messages.push(...page.messages);
      task.has_more_messages = page.has_more_messages;
      task.next_after_sequence_no = page.next_after_sequence_no;
    }
    return task;
  }

  /** Accepts a pending handoff with a `run` claim; a worker whose accept loses skips the task. */
  private async take(taskId: string): Promise<void> {
    this.claiming.add(taskId);
    try {
      try {
        await this.essential(() =>
          this.client.call('tasks/update', {
            task_id: taskId,
            transition: 'accept',
            session_id: this.options.sessionId,
            message: {
              parts: [{ type: 'text', text: `Accepted by ${this.options.sessionId}; running its command (at most ${duration(this.options.timeoutMs)}).` }],
              payload: marker('run', this.options.sessionId, this.leaseSeconds),
            },
          }),
        );
      } catch (error) {
        if (isConflict(error)) return; // another worker (or a person) took it, or it is not ours
        throw error;
      }
      this.options.log(`worker: ${taskId}: accepted`);
      this.start(taskId, 1, null);
    } finally {
      this.claiming.delete(taskId);
    }
  }

  /** Looks after an accepted task: fails it when the run that held it is gone, resumes it when the sender answered. */
  private async check(taskId: string, listed: TaskListItem | null): Promise<void> {
    if (this.liveness.holds(taskId)) return;
    const known = listed ? this.seen.get(taskId) : undefined;
    if (known && known.updatedAt === listed?.updated_at) {
      if (known.standing.kind === 'not_a_worker_task' || known.standing.kind === 'idle') return;
      if (known.standing.kind === 'run' && !runIsAbandoned(taskId, known.standing.claim, known.updatedAt, this.liveness)) return;
    }
    const task = await this.wholeTask(taskId);
    // A listed task is one of the inbox; an event may be of a task this agent sent.
    if (listed) this.handle ??= task.recipient;
    if (task.recipient !== this.handle) return;
    const standing = standingOf(task);
    this.seen.set(taskId, { updatedAt: task.updated_at, standing });
    if (standing.kind === 'run') {
      if (!this.liveness.holds(taskId) && runIsAbandoned(taskId, standing.claim, task.updated_at, this.liveness)) await this.abandon(task, standing.claim);
    } else if (standing.kind === 'answered') {
      this.enqueue(taskId, 'resume');
    }
  }

  private async abandon(task: Task, claim: WorkerMarker): Promise<void> {
    const reason =
      `The worker ${claim.session_id} that ran this handoff stopped before its command finished ` +
      `(it was killed or lost, and no run of it is left). It is not run again, as a half-done command may have changed things: send the handoff again to retry.`;
    this.options.log(`worker: ${task.task_id}: the run of ${claim.session_id} is gone; failing the task`);
    await this.finish(task.task_id, () => this.client.transition(task.task_id, 'fail', { reason, sessionId: this.options.sessionId }));
  }

  /** After the sender's answer: claims the next run (one worker wins: the claim's message id is the question's), then runs it. */
  private async resume(taskId: string): Promise<void> {
    if (this.stopping || this.liveness.holds(taskId)) return;
    this.claiming.add(taskId);
    try {
      const task = await this.wholeTask(taskId);
      const standing = standingOf(task);
      if (standing.kind !== 'answered') return;
      const answer = task.messages
        .filter((message) => message.sequence_no > standing.question.sequence_no && message.from !== task.recipient)
        .map((message) => message.body)
        .join('\n\n');
      try {
        await this.essential(() =>
          this.client.call('tasks/updateStatus', {
            id: taskId,
            status: {
              state: 'working',
              message: {
                kind: 'message',
                role: 'agent',
                messageId: `agentrelay-worker-resume-${standing.question.sequence_no}`,
                parts: [{ kind: 'text', text: `Resumed by ${this.options.sessionId} with the sender's answer (at most ${duration(this.options.timeoutMs)}).` }],
                metadata: marker('run', this.options.sessionId, this.leaseSeconds),
              },
            },
          }),
        );
      } catch (error) {
        if (isConflict(error) || lostMessageIdRace(error)) return; // another worker resumed it
        throw error;
      }
      this.options.log(`worker: ${taskId}: resumed with the sender's answer`);
      this.start(taskId, standing.runs + 1, answer);
    } finally {
      this.claiming.delete(taskId);
    }
  }

  private start(taskId: string, run: number, answer: string | null): void {
    const runningTask: RunningTask = { controller: new AbortController(), stopReason: null };
    this.running.set(taskId, runningTask);
    void this.execute(taskId, run, answer, runningTask).finally(() => {
      this.running.delete(taskId);
      this.wake();
      if (this.running.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }

  private async execute(taskId: string, run: number, answer: string | null, runningTask: RunningTask): Promise<void> {
    let dir: string | null = null;
    const prompts = this.toolPrompts.register(taskId);
    try {
      const task = await this.wholeTask(taskId);
      this.handle ??= task.recipient; // only the recipient can accept or resume a task
      if (task.status.state !== 'accepted') return;
      dir = await mkdtemp(join(this.options.workdir ?? tmpdir(), `agentrelay-${taskId}-`));
      const input = await writeTaskFiles(dir, task, run, answer);
      const hooks = await this.writeHookConfig(dir);
      const progress = new ProgressCoalescer({
        intervalMs: this.options.progressIntervalMs,
        maxUpdates: MAX_PROGRESS_UPDATES,
        maxChars: PROGRESS_MAX_CHARS,
        send: (text) => this.progress(taskId, text),
      });
      const outcome = await runCommand({
        command: this.options.command,
        cwd: dir,
        env: {
          ...this.options.env,
          AGENTRELAY_TASK_ID: taskId,
          AGENTRELAY_SENDER: task.sender.handle,
          AGENTRELAY_INTENT: task.intent,
          AGENTRELAY_TEXT: input.text.slice(0, ENV_TEXT_MAX_CHARS),
          AGENTRELAY_TASK_DIR: dir,
          AGENTRELAY_INPUT_FILE: join(dir, INPUT_FILE),
          AGENTRELAY_ARTIFACTS_DIR: input.artifacts_dir,
          AGENTRELAY_RUN: String(run),
          AGENTRELAY_SESSION_ID: this.options.sessionId,
          ...(answer !== null ? { AGENTRELAY_ANSWER: answer.slice(0, ENV_TEXT_MAX_CHARS) } : {}),
          [TOOL_PROMPT_URL_ENV]: prompts.url,
          [CLAUDE_SETTINGS_ENV]: hooks.claudeSettings,
          [CODEX_HOOKS_ENV]: hooks.codexOverride,
        },
        stdin: `${JSON.stringify(input)}\n`,
        timeoutMs: this.options.timeoutMs,
        killGraceMs: this.options.killGraceMs ?? 10_000,
        onProgress: (text) => progress.push(text),
        signal: runningTask.controller.signal,
      });
      await progress.close();
      await this.report(task, dir, outcome, runningTask);
    } catch (error) {
      this.options.log(`worker: ${taskId}: ${(error as Error).message}`);
      await this.finish(taskId, () =>
        this.client.transition(taskId, 'fail', { reason: failReason('The worker could not run this handoff.', (error as Error).message) }),
      ).catch(() => undefined);
    } finally {
      prompts.release();
      if (dir !== null && this.options.workdir === null) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** The permission hooks of Claude Code (a settings file) and Codex (a `-c` override) for one run. */
  private async writeHookConfig(dir: string): Promise<{ claudeSettings: string; codexOverride: string }> {
    const { cliCommand, timeoutMs } = this.options.toolPrompts;
    const hook = (client: string): string => [...cliCommand, 'hook', 'permission', '--client', client].map(shellWord).join(' ');
    const timeoutSeconds = clientHookTimeoutSeconds(timeoutMs);
    const claudeSettings = join(dir, HOOKS_DIR, CLAUDE_SETTINGS_FILE);
    await mkdir(join(dir, HOOKS_DIR));
    await writeFile(claudeSettings, `${JSON.stringify(claudeToolPromptSettings(hook('claude-code'), timeoutSeconds, ['PreToolUse']), null, 2)}\n`);
    return { claudeSettings, codexOverride: codexToolPromptOverride(hook('codex'), timeoutSeconds) };
  }

  /** One progress update (A2A `tasks/updateStatus`, state working), only while the request budget has tokens to spare. */
  private async progress(taskId: string, text: string): Promise<boolean> {
    if (!this.budget.trySpare(Math.ceil(this.options.requestsPerMinute / 4))) return false;
    await this.spareClient.call('tasks/updateStatus', {
      id: taskId,
      status: {
        state: 'working',
        message: {
          kind: 'message',
          role: 'agent',
          messageId: randomUUID(),
          parts: [{ kind: 'text', text }],
          metadata: marker('progress', this.options.sessionId),
        },
      },
    });
    return true;
  }

  private async report(task: Task, dir: string, outcome: CommandOutcome, runningTask: RunningTask): Promise<void> {
    const taskId = task.task_id;
    const fail = (headline: string, detail = ''): Promise<void> => {
      this.options.log(`worker: ${taskId}: failed: ${headline}`);
      return this.finish(taskId, () => this.client.transition(taskId, 'fail', { reason: failReason(headline, detail) }));
    };
    const stderr = (): string => {
      const tail = outcome.output.stderrTail();
      return tail ? `Last lines of stderr:\n${tail}` : 'It wrote nothing to stderr.';
    };
    switch (outcome.kind) {
      case 'stopped':
        if (runningTask.stopReason === 'cancelled') return;
        return fail('The worker was told to stop at once, so it killed the command before it finished.', stderr());
      case 'timed_out':
        return fail(`The command timed out after ${duration(this.options.timeoutMs)} and was killed (SIGTERM, then SIGKILL).`, stderr());
      case 'not_started':
        return fail(`The command could not be started: ${outcome.error}`);
      case 'exited':
        return fail(outcome.code !== null ? `The command exited with code ${outcome.code}.` : `The command was killed by ${outcome.signal}.`, stderr());
      case 'input_required': {
        const question = outcome.output.question();
        if (question === null) return fail('The command asked for input (exit code 3) but printed no question.', stderr());
        this.options.log(`worker: ${taskId}: asking the sender`);
        return this.finish(taskId, () =>
          this.client.call('tasks/update', {
            task_id: taskId,
            transition: 'request_input',
            message: { parts: [{ type: 'text', text: question }], payload: marker('question', this.options.sessionId) },
          }),
        );
      }
      case 'completed': {
        const collected = await collectArtifacts(dir, heldArtifacts(task));
        const summary = outcome.output.result() || '(The command printed no output.)';
        const note = (names: string[]): string => (names.length ? `\n\nArtifacts left out: ${names.join('; ')}`.slice(0, 4000) : '');
        this.options.log(`worker: ${taskId}: completed (${collected.artifacts.length} artifact(s))`);
        return this.finish(taskId, async () => {
          try {
            await this.complete(taskId, summary + note(collected.skipped), collected.artifacts);
          } catch (error) {
            if (!(error instanceof RelayClientError) || error.reason !== 'invalid_params' || collected.artifacts.length === 0) throw error;
            const refused = collected.artifacts.map((artifact) => artifact.name);
            await this.complete(taskId, summary + note([...collected.skipped, `${refused.join(', ')} (refused by the relay: ${error.message})`]), []);
          }
        });
      }
    }
  }

  private complete(taskId: string, summary: string, artifacts: OutputArtifact[]): Promise<unknown> {
    return this.client.call('tasks/complete', {
      id: taskId,
      message: { kind: 'message', role: 'agent', messageId: randomUUID(), parts: [{ kind: 'text', text: summary }] },
      artifacts,
    });
  }

  /** A call that ends a run (complete, fail, request input); losing it to a change by someone else (a cancel) is no error. */
  private async finish(taskId: string, call: () => Promise<unknown>): Promise<void> {
    try {
      await this.essential(call);
    } catch (error) {
      if (!isConflict(error)) throw error;
      this.options.log(`worker: ${taskId}: the task changed meanwhile (${(error as RelayClientError).reason}); leaving it as it is`);
    }
  }
}
