import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RelayClient, type Task } from '@app/relay-client';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { WorkerProcess } from './support/fake-coding-agents';
import { RelayHarness } from './support/relay-harness';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./support/process/register-ts.mjs', import.meta.url));

/** Workers are real processes started from the TypeScript sources: a loaded machine starts them slowly. */
const PROCESS_TEST_TIMEOUT_MS = 300_000;
const SETTLE_MS = 120_000;

const PROCESSES: WorkerProcess[] = [];

function startWorker(agent: RegisteredTestAgent, relayUrl: string, args: string[], env: Record<string, string> = {}): WorkerProcess {
  const child = spawn(process.execPath, ['--import', REGISTER_TS, 'apps/cli/src/main.ts', 'worker', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', RELAY_URL: relayUrl, AGENTRELAY_API_KEY: agent.api_key, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const worker = new WorkerProcess(child);
  PROCESSES.push(worker);
  return worker;
}

/** The handoff's end state as its sender reads it. */
async function settled(client: RelayClient, taskId: string, worker: WorkerProcess, states: string[] = ['completed', 'failed']): Promise<Task> {
  return eventually(
    async () => {
      const thread = await client.getTask(taskId);
      if (!states.includes(thread.status.state)) throw new Error(`${taskId} is ${thread.status.state}; the worker said:\n${worker.stderr.slice(-3000)}`);
      return thread;
    },
    SETTLE_MS,
    250,
  );
}

describe('agentrelay worker: a headless agent that runs a command per handoff', () => {
  let relay: RelayHarness;
  let dir: string;
  let bob: RegisteredTestAgent;
  let bobClient: RelayClient;
  const org = `worker${Math.random().toString(36).slice(2, 7)}`;

  /** A recipient of its own per test, so that no worker of another test takes its handoffs. */
  const recipient = (name: string): Promise<RegisteredTestAgent> => registerAgent(relay, { handle: uniqueHandle(name, org), name });
  const send = async (to: RegisteredTestAgent, text: string): Promise<string> => (await bobClient.createTask({ recipient: to.agent.handle, text })).task_id;
  const script = async (name: string, source: string): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, source);
    return `node ${path}`;
  };

  beforeAll(async () => {
    relay = await RelayHarness.start();
    dir = await mkdtemp(join(tmpdir(), 'agentrelay-worker-e2e-'));
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    bobClient = new RelayClient({ url: relay.url, apiKey: bob.api_key });
  }, PROCESS_TEST_TIMEOUT_MS);

  afterAll(async () => {
    for (const worker of PROCESSES) worker.child.kill('SIGKILL');
    await relay?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'completes a handoff with the command output as result, its progress lines as status updates and its artifacts/ files as artifacts',
    async () => {
      const frank = await recipient('frank');
      const command = await script(
        'complete.mjs',
        `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const input = JSON.parse(readFileSync(0, 'utf8'));
const fromFile = JSON.parse(readFileSync(process.env.AGENTRELAY_INPUT_FILE, 'utf8'));
console.log('progress: reading the handoff');
// Runs on until the test has seen that progress on the task (an update still pending when a command ends is dropped).
while (!existsSync(process.env.RELEASE_FILE)) await new Promise((resolve) => setTimeout(resolve, 50));
writeFileSync('artifacts/change.diff', '--- a/x.ts\\n+++ b/x.ts\\n@@ -1 +1 @@\\n-old\\n+new\\n');
writeFileSync('artifacts/notes.md', '# Notes\\n' + process.env.AGENTRELAY_TEXT + '\\n');
console.log('Handled "' + input.text + '" from ' + input.sender.handle + ' (' + process.env.AGENTRELAY_SENDER + ', ' + process.env.AGENTRELAY_INTENT + ')');
console.log('same input in the file: ' + (fromFile.task_id === process.env.AGENTRELAY_TASK_ID) + ', key passed on: ' + (process.env.AGENTRELAY_API_KEY !== undefined));
`,
      );
      const release = join(dir, 'release-complete');
      const worker = startWorker(frank, relay.url, ['--exec', command, '--progress-interval', '1s'], { RELEASE_FILE: release });
      const taskId = await send(frank, 'Rename the users table');
      await eventually(async () => (await bobClient.getTask(taskId)).messages.some((message) => message.body === 'reading the handoff'), SETTLE_MS, 250);
      await writeFile(release, '');
      const thread = await settled(bobClient, taskId, worker);

      expect(thread.status.state).toBe('completed');
      expect(thread.result_summary).toBe(
        `Handled "Rename the users table" from ${bob.agent.handle} (${bob.agent.handle}, inform)\nsame input in the file: true, key passed on: false`,
      );
      expect(thread.result_summary).not.toContain('progress:');
      const artifacts = thread.artifacts as Array<{ name?: string; parts?: Array<{ type: string; text?: string }> }>;
      expect(artifacts.map((artifact) => artifact.name).sort()).toEqual(['change.diff', 'notes.md']);
      expect(artifacts.find((artifact) => artifact.name === 'notes.md')?.parts).toEqual([{ type: 'text', text: '# Notes\nRename the users table\n' }]);
      const bodies = thread.messages.map((message) => message.body);
      expect(bodies[1]).toMatch(/^Accepted by worker:.+:\d+; running its command \(at most 30m\)\.$/);
      expect(bodies).toContain('reading the handoff');
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "attaches the artifacts that fit the thread's artifact budget and names in the result the ones left out",
    async () => {
      const frank = await recipient('frank');
      const command = await script(
        'big-artifacts.mjs',
        `import { writeFileSync } from 'node:fs';
writeFileSync('artifacts/a-small.txt', 'small');
writeFileSync('artifacts/b-big.bin', Buffer.alloc(300 * 1024, 7));
writeFileSync('artifacts/c-also-big.txt', 'y'.repeat(120 * 1024));
console.log('made three files');
`,
      );
      const worker = startWorker(frank, relay.url, ['--exec', command]);
      const thread = await settled(bobClient, await send(frank, 'Make files'), worker);

      expect(thread.status.state).toBe('completed');
      // b-big.bin travels as base64 (400 KiB): past the thread's 384 KiB on its own.
      expect((thread.artifacts as Array<{ name?: string }>).map((artifact) => artifact.name)).toEqual(['a-small.txt', 'c-also-big.txt']);
      expect(thread.result_summary).toMatch(
        /^made three files\n\nArtifacts left out: b-big\.bin \(307200 bytes: the thread's artifacts would pass 393216 bytes\)$/,
      );
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it('refuses to start without a command, with a usage error', async () => {
    const errors: string[] = [];
    const io = { stdout: () => undefined, stderr: (text: string) => errors.push(text) };
    expect(await run(['worker'], { RELAY_URL: relay.url, AGENTRELAY_API_KEY: bob.api_key }, io)).toBe(EXIT.usage);
    expect(errors.join('')).toContain("worker needs --exec '<command>'");
    expect(await run(['worker', '--exec', 'true', '--timeout', 'soon'], { RELAY_URL: relay.url, AGENTRELAY_API_KEY: bob.api_key }, io)).toBe(EXIT.usage);
    expect(errors.join('')).toContain('--timeout takes a duration such as 30m, 90s or 1h.');
    expect(await run(['worker', '--exec', 'true'], { RELAY_URL: relay.url, AGENTRELAY_API_KEY: 'ah_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, io)).toBe(
      EXIT.unauthorized,
    );
  });

  it(
    'fails the handoff when the command exits non-zero, naming the exit code and the last lines of stderr',
    async () => {
      const frank = await recipient('frank');
      const command = await script('fail.mjs', `for (let i = 1; i <= 30; i++) console.error('boom ' + i);\nprocess.exit(7);\n`);
      const worker = startWorker(frank, relay.url, ['--exec', command]);
      const thread = await settled(bobClient, await send(frank, 'Break please'), worker);

      expect(thread.status.state).toBe('failed');
      expect(thread.reason).toMatch(/^The command exited with code 7\.\nLast lines of stderr:\nboom 11\n/);
      expect(thread.reason).toContain('boom 30');
      expect(thread.reason).not.toContain('boom 10\n');
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'kills a command that runs past --timeout and fails its handoff saying so',
    async () => {
      const frank = await recipient('frank');
      const marker = join(dir, 'slow-started');
      const command = await script(
        'slow.mjs',
        `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, String(process.pid));\nsetInterval(() => {}, 1000);\n`,
      );
      const worker = startWorker(frank, relay.url, ['--exec', command, '--timeout', '3s']);
      const thread = await settled(bobClient, await send(frank, 'Take forever'), worker);

      expect(thread.status.state).toBe('failed');
      expect(thread.reason).toMatch(/^The command timed out after 3s and was killed \(SIGTERM, then SIGKILL\)\./);
      const pid = Number(await readFile(marker, 'utf8'));
      await eventually(() => expect(isRunning(pid)).toBe(false), 30_000);
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'kills what a finished command left running in its process group',
    async () => {
      const frank = await recipient('frank');
      const pidFile = join(dir, 'left-behind.pid');
      const worker = startWorker(frank, relay.url, ['--exec', `sleep 300 >/dev/null 2>&1 & echo $! > ${pidFile}; echo left a sleeper`]);
      const thread = await settled(bobClient, await send(frank, 'Leave something behind'), worker);

      expect(thread.status.state).toBe('completed');
      expect(thread.result_summary).toBe('left a sleeper');
      const pid = Number(await readFile(pidFile, 'utf8'));
      await eventually(() => expect(isRunning(pid)).toBe(false), 30_000);
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'asks the sender when the command needs input, and runs it again with the whole thread once the sender answered',
    async () => {
      const frank = await recipient('frank');
      const command = await script(
        'ask.mjs',
        `import { readFileSync } from 'node:fs';
const input = JSON.parse(readFileSync(0, 'utf8'));
if (input.run === 1) { console.log('input-required: Which branch should I deploy?'); process.exit(3); }
console.log('Deployed ' + input.answer + ' after ' + input.messages.length + ' messages (run ' + process.env.AGENTRELAY_RUN + ')');
`,
      );
      const worker = startWorker(frank, relay.url, ['--exec', command]);
      const taskId = await send(frank, 'Deploy the app');
      const asked = await settled(bobClient, taskId, worker, ['input_required']);
      expect(asked.messages[asked.messages.length - 1].body).toBe('Which branch should I deploy?');

      await bobClient.appendMessage(taskId, 'release/2.0');
      const done = await settled(bobClient, taskId, worker);
      expect(done.status.state).toBe('completed');
      // The thread the second run read: the handoff, the accept, the question and the answer.
      expect(done.result_summary).toBe('Deployed release/2.0 after 5 messages (run 2)');
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "two workers on one handle resume each answered question once (the resume's claim is the lock)",
    async () => {
      const frank = await recipient('frank');
      const runs = join(dir, 'resume-runs');
      await mkdir(runs);
      const command = await script(
        'ask-and-count.mjs',
        `import { appendFileSync, readFileSync } from 'node:fs';
const input = JSON.parse(readFileSync(0, 'utf8'));
appendFileSync(${JSON.stringify(runs)} + '/' + input.task_id + '-' + input.run, process.env.AGENTRELAY_SESSION_ID + '\\n');
if (input.run === 1) { console.log('input-required: Go ahead?'); process.exit(3); }
console.log('went ahead: ' + input.answer);
`,
      );
      const workers = [
        startWorker(frank, relay.url, ['--exec', command, '--concurrency', '3']),
        startWorker(frank, relay.url, ['--exec', command, '--concurrency', '3']),
      ];
      const taskIds: string[] = [];
      for (let i = 0; i < 6; i++) taskIds.push(await send(frank, `Question ${i}`));
      for (const taskId of taskIds) await settled(bobClient, taskId, workers[0], ['input_required']);
      for (const taskId of taskIds) await bobClient.appendMessage(taskId, 'yes');

      for (const taskId of taskIds) expect((await settled(bobClient, taskId, workers[0])).result_summary).toBe('went ahead: yes');
      for (const taskId of taskIds) {
        for (const run of [1, 2]) expect((await readFile(join(runs, `${taskId}-${run}`), 'utf8')).trim().split('\n')).toHaveLength(1);
      }
      expect(await Promise.all(workers.map((worker) => worker.stop()))).toEqual([0, 0]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'after a worker is killed with SIGKILL mid-task, a restarted worker ends that task (failed, not left accepted)',
    async () => {
      const frank = await recipient('frank');
      const pidFile = join(dir, 'killed-run.pid');
      const command = await script(
        'long.mjs',
        `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(pidFile)}, String(process.pid));\nsetInterval(() => console.log('progress: still working'), 200);\n`,
      );
      const first = startWorker(frank, relay.url, ['--exec', command]);
      const taskId = await send(frank, 'A long job');
      await eventually(() => expect(existsSync(pidFile)).toBe(true), SETTLE_MS, 100);
      first.child.kill('SIGKILL');
      await first.exited;

      const second = startWorker(frank, relay.url, ['--exec', command]);
      const thread = await settled(bobClient, taskId, second);
      expect(thread.status.state).toBe('failed');
      expect(thread.reason).toMatch(/^The worker worker:.+:\d+ that ran this handoff stopped before its command finished/);
      // The orphaned command dies on its next write to the dead worker's pipe.
      const pid = Number(await readFile(pidFile, 'utf8'));
      await eventually(() => expect(isRunning(pid)).toBe(false), 30_000);
      expect(await second.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'on SIGTERM takes no new handoff, lets the running command finish and completes its task, then exits 0',
    async () => {
      const frank = await recipient('frank');
      const started = join(dir, 'graceful-started');
      const command = await script(
        'graceful.mjs',
        `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(started)}, 'yes');\nsetTimeout(() => console.log('finished after the signal'), 3000);\n`,
      );
      const worker = startWorker(frank, relay.url, ['--exec', command]);
      const taskId = await send(frank, 'Finish what you started');
      await eventually(() => expect(existsSync(started)).toBe(true), SETTLE_MS, 100);
      worker.child.kill('SIGTERM');
      const later = await send(frank, 'Too late');
      expect(await worker.exited).toBe(0);

      const thread = await bobClient.getTask(taskId);
      expect(thread.status.state).toBe('completed');
      expect(thread.result_summary).toBe('finished after the signal');
      expect((await bobClient.getTask(later)).status.state).toBe('pending');
      expect(worker.stderr).toContain('SIGTERM: taking no new handoffs');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'stops the command when the sender cancels the accepted handoff, and leaves the task cancelled',
    async () => {
      const frank = await recipient('frank');
      const pidFile = join(dir, 'cancelled-run.pid');
      const command = await script(
        'cancelled.mjs',
        `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(pidFile)}, String(process.pid));\nsetInterval(() => {}, 1000);\n`,
      );
      const worker = startWorker(frank, relay.url, ['--exec', command]);
      const taskId = await send(frank, 'Start and be cancelled');
      await eventually(() => expect(existsSync(pidFile)).toBe(true), SETTLE_MS, 100);
      // A2A's cancel (an `id`, no AgentRelay fields) stops work already accepted.
      await bobClient.call('tasks/cancel', { id: taskId });

      const pid = Number(await readFile(pidFile, 'utf8'));
      await eventually(() => expect(isRunning(pid)).toBe(false), SETTLE_MS);
      await eventually(() => expect(worker.stderr).toContain(`${taskId}: cancelled by the sender`), SETTLE_MS);
      expect((await bobClient.getTask(taskId)).status.state).toBe('cancelled');
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'two workers on one handle run each of 20 handoffs exactly once',
    async () => {
      const frank = await recipient('frank');
      const runs = join(dir, 'runs');
      await mkdir(runs);
      const command = await script(
        'count.mjs',
        `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(runs)} + '/' + process.env.AGENTRELAY_TASK_ID, process.env.AGENTRELAY_SESSION_ID + '\\n');\nconsole.log('ran');\n`,
      );
      const workers = [
        startWorker(frank, relay.url, ['--exec', command, '--concurrency', '3']),
        startWorker(frank, relay.url, ['--exec', command, '--concurrency', '3']),
      ];
      const taskIds: string[] = [];
      for (let i = 0; i < 20; i++) taskIds.push(await send(frank, `Job ${i}`));

      for (const taskId of taskIds) expect((await settled(bobClient, taskId, workers[0])).status.state).toBe('completed');
      expect((await readdir(runs)).sort()).toEqual([...taskIds].sort());
      for (const taskId of taskIds) {
        const lines = (await readFile(join(runs, taskId), 'utf8')).trim().split('\n');
        expect(lines).toHaveLength(1);
      }
      expect(await Promise.all(workers.map((worker) => worker.stop()))).toEqual([0, 0]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
