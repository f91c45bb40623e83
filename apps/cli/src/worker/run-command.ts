import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { INPUT_REQUIRED_EXIT_CODE, RunOutput } from './output';

export interface CommandRun {
  command: string;
  cwd: string;
  env: Record<string, string>;
  stdin: string;
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL of the command's process group. */
  killGraceMs: number;
  onProgress(text: string): void;
  /** Stops the command early (the task was cancelled, or the worker is told to stop now). */
  signal: AbortSignal;
}

export type CommandOutcome =
  | { kind: 'completed'; output: RunOutput }
  | { kind: 'input_required'; output: RunOutput }
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null; output: RunOutput }
  | { kind: 'timed_out'; output: RunOutput }
  | { kind: 'stopped'; output: RunOutput }
  | { kind: 'not_started'; error: string; output: RunOutput };

/**
 * Runs the command through the shell in its own process group, the handoff on stdin, and reads
 * its stdout line by line (progress lines go to `onProgress`). Past `timeoutMs`, or when `signal`
 * aborts, the whole group gets SIGTERM and, `killGraceMs` later, SIGKILL; when the run ends, what is
 * left of the group is killed.
 */
export function runCommand(run: CommandRun): Promise<CommandOutcome> {
  const output = new RunOutput();
  return new Promise((resolve) => {
    const child = spawn(run.command, { shell: true, cwd: run.cwd, env: run.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let ending: 'timed_out' | 'stopped' | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // the group is gone already
      }
    };
    const end = (why: 'timed_out' | 'stopped'): void => {
      if (ending) return;
      ending = why;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), run.killGraceMs);
    };
    const timeout = setTimeout(() => end('timed_out'), run.timeoutMs);
    const onAbort = (): void => end('stopped');
    run.signal.addEventListener('abort', onAbort, { once: true });
    if (run.signal.aborted) onAbort();

    child.stdin.on('error', () => undefined); // a command that does not read its input closes the pipe early
    child.stdin.end(run.stdin);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      const progress = output.stdoutLine(line);
      if (progress !== null && progress !== '') run.onProgress(progress);
    });
    child.stderr.on('data', (chunk: string) => output.stderrChunk(chunk));

    let startError: string | null = null;
    child.on('error', (error) => {
      startError = error.message;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timeout);
      run.signal.removeEventListener('abort', onAbort);
      // Processes the command left behind in its group go with it: the next run starts clean.
      killGroup('SIGKILL');
      if (killTimer) clearTimeout(killTimer);
      if (startError !== null && code === null && signal === null) resolve({ kind: 'not_started', error: startError, output });
      else if (ending) resolve({ kind: ending, output });
      else if (code === INPUT_REQUIRED_EXIT_CODE || (code === 0 && output.asked)) resolve({ kind: 'input_required', output });
      else if (code === 0) resolve({ kind: 'completed', output });
      else resolve({ kind: 'exited', code, signal, output });
    });
  });
}
