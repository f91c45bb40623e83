import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { RelayClient, RelayClientError } from '@app/relay-client';
import { cliErrorOf } from '../agent-commands';
import { CliError, EXIT, usage } from '../cli-errors';
import { defaultSessionId } from './claims';
import { INPUT_REQUIRED_EXIT_CODE, INPUT_REQUIRED_MARKER, PROGRESS_MARKER } from './output';
import { parseAllowTools } from './tool-prompt-broker';
import { Worker } from './worker';

/** Tools a worker's coding agent uses without a question unless --allow-tools says otherwise: they only read. */
export const DEFAULT_ALLOW_TOOLS = 'Read,Glob,Grep,LS,TodoWrite';

export const WORKER_USAGE = `Headless worker (authenticates with $AGENTRELAY_API_KEY or --api-key):
  worker --exec '<command>' [--concurrency 1] [--timeout 30m] [--workdir <dir>]
         [--progress-interval 10s] [--requests-per-minute 50]
         [--permission-timeout 5m] [--allow-tools ${DEFAULT_ALLOW_TOOLS}]
                                    take each handoff addressed to you and run <command> for it
                                    (the handoff on stdin as JSON); stdout lines "${PROGRESS_MARKER}…" are
                                    status updates, exit code ${INPUT_REQUIRED_EXIT_CODE} or "${INPUT_REQUIRED_MARKER}…" asks the sender;
                                    SIGTERM/SIGINT stop it gracefully, a second one at once;
                                    claude --settings "$AGENTRELAY_CLAUDE_SETTINGS" or
                                    codex exec -c "$AGENTRELAY_CODEX_HOOKS" asks the sender on the
                                    handoff for each tool not in --allow-tools (no answer: denied)
`;

const OPTIONS = {
  exec: { type: 'string' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
  workdir: { type: 'string' },
  'progress-interval': { type: 'string' },
  'requests-per-minute': { type: 'string' },
  'permission-timeout': { type: 'string' },
  'allow-tools': { type: 'string' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface WorkerIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** A duration such as `30m`, `90s`, `1h` or `500ms`; a bare number is seconds. */
export function parseDuration(value: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw usage(`${option} takes a duration such as 30m, 90s or 1h.`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = Math.round(Number(match[1]) * unit);
  if (ms < 1) throw usage(`${option} must be longer than 0.`);
  return ms;
}

function integer(value: string | undefined, option: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) throw usage(`${option} must be an integer from ${min} to ${max}.`);
  return number;
}

/** `agentrelay worker …`: runs until SIGTERM or SIGINT, then exits 0 once its running tasks ended. */
export async function runWorkerCommand(argv: string[], env: Record<string, string | undefined>, io: WorkerIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: false, strict: true });
  } catch (error) {
    throw usage((error as Error).message);
  }
  const { values } = parsed;
  if (values.help) {
    io.stdout(WORKER_USAGE);
    return EXIT.ok;
  }
  const command = values.exec?.trim();
  if (!command) throw usage("worker needs --exec '<command>' (run through the shell for each handoff).");
  const apiKey = values['api-key'] ?? env.AGENTRELAY_API_KEY;
  if (!apiKey) throw new CliError('No API key: set AGENTRELAY_API_KEY (your agent key, ah_live_…) or pass --api-key.', EXIT.usage);
  const url = values.url ?? env.RELAY_URL ?? 'http://127.0.0.1:8080';
  const timeoutMs = parseDuration(values.timeout ?? '30m', '--timeout');
  const progressIntervalMs = parseDuration(values['progress-interval'] ?? '10s', '--progress-interval');
  if (progressIntervalMs < 1000) throw usage('--progress-interval must be at least 1s.');
  const concurrency = integer(values.concurrency, '--concurrency', 1, 1, 32);
  const requestsPerMinute = integer(values['requests-per-minute'], '--requests-per-minute', 50, 10, 100_000);
  const workdir = values.workdir ? resolve(values.workdir) : null;
  const permissionTimeoutMs = parseDuration(values['permission-timeout'] ?? '5m', '--permission-timeout');
  if (permissionTimeoutMs > 24 * 3_600_000) throw usage('--permission-timeout must be at most 24h.');
  const allowTools = parseAllowTools(values['allow-tools'] ?? DEFAULT_ALLOW_TOOLS);
  if (workdir !== null) await mkdir(workdir, { recursive: true });

  // The key is refused at once, not in a loop of failed calls.
  try {
    await new RelayClient({ url, apiKey }).listTasks({ role: 'recipient', status: ['pending'], limit: 1 });
  } catch (error) {
    if (error instanceof RelayClientError) throw cliErrorOf(error);
    throw error;
  }

  const host = hostname();
  const childEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && key !== 'AGENTRELAY_API_KEY') childEnv[key] = value;
  const worker = new Worker({
    url,
    apiKey,
    command,
    concurrency,
    timeoutMs,
    workdir,
    progressIntervalMs,
    requestsPerMinute,
    sessionId: env.AGENTRELAY_SESSION_ID || defaultSessionId(host, process.pid),
    host,
    env: childEnv,
    toolPrompts: { timeoutMs: permissionTimeoutMs, allowTools, cliCommand: [process.execPath, ...process.execArgv, resolve(process.argv[1])] },
    log: (line) => io.stderr(`${new Date().toISOString()} ${line}\n`),
  });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals === 1) {
      io.stderr(`${new Date().toISOString()} worker: ${signal}: taking no new handoffs; the running ones finish (send it again to stop them now)\n`);
      worker.stop();
    } else {
      worker.stopNow();
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    await worker.run();
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  return EXIT.ok;
}
