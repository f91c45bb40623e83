import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import type { AdminTaskPage } from '@app/contracts';
import { seedFile, writeNatsCredentials } from '../scripts/nats-credentials';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { rpc } from './support/json-rpc';
import { PrivateNatsServer } from './support/private-nats';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./support/process/register-ts.mjs', import.meta.url));
const CONSUMER = 'open_handoffs';

type Table = Record<string, Array<{ task_id: string; state: string }>>;

/** The relay's own answer: every open task by recipient, from the admin API. */
async function openTasksOf(relay: RelayHarness): Promise<Record<string, string[]>> {
  const byRecipient: Record<string, string[]> = {};
  let cursor: string | null = null;
  do {
    const response = await request(relay.url)
      .get('/admin/tasks')
      .query({ state: 'pending,accepted,input_required', limit: 200, ...(cursor ? { cursor } : {}) })
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .expect(200);
    const page = response.body as AdminTaskPage;
    for (const row of page.items) (byRecipient[row.recipient.handle] ??= []).push(`${row.id}:${row.state}`);
    cursor = page.next_cursor;
  } while (cursor);
  for (const list of Object.values(byRecipient)) list.sort();
  return byRecipient;
}

function asComparable(table: Table): Record<string, string[]> {
  return Object.fromEntries(Object.entries(table).map(([recipient, tasks]) => [recipient, tasks.map((task) => `${task.task_id}:${task.state}`).sort()]));
}

/**
 * Handoffs going on among `agents`: each step creates a task or moves one of the open ones along
 * (accept, ask, answer, complete, cancel, decline), one step at a time per worker.
 */
class Activity {
  private readonly open: Array<{ id: string; sender: RegisteredTestAgent; recipient: RegisteredTestAgent; state: string }> = [];
  steps = 0;

  constructor(
    private readonly relay: RelayHarness,
    private readonly agents: RegisteredTestAgent[],
  ) {}

  async step(): Promise<void> {
    this.steps++;
    const update = (agent: RegisteredTestAgent, id: string, transition: string, extra: Record<string, unknown> = {}) =>
      rpc(this.relay.url, agent.api_key, 'tasks/update', { task_id: id, transition, ...extra });
    const task = this.open.length > 0 && Math.random() < 0.7 ? this.open.splice(Math.floor(Math.random() * this.open.length), 1)[0] : null;
    if (!task) {
      const sender = this.agents[Math.floor(Math.random() * this.agents.length)];
      const others = this.agents.filter((agent) => agent !== sender);
      const recipient = others[Math.floor(Math.random() * others.length)];
      this.open.push({ id: await createTask(this.relay.url, sender, recipient, `Handoff ${this.steps}`), sender, recipient, state: 'pending' });
      return;
    }
    const roll = Math.random();
    if (task.state === 'pending') {
      if (roll < 0.6) await update(task.recipient, task.id, 'accept');
      else if (roll < 0.8) await update(task.sender, task.id, 'cancel');
      else await update(task.recipient, task.id, 'decline', { reason: 'not mine' });
      if (roll < 0.6) this.open.push({ ...task, state: 'accepted' });
    } else if (task.state === 'accepted') {
      if (roll < 0.4) {
        await update(task.recipient, task.id, 'request_input', { message: { role: 'user', parts: [{ type: 'text', text: 'Which one?' }] } });
        this.open.push({ ...task, state: 'input_required' });
      } else await update(task.recipient, task.id, 'complete', { result_summary: 'Done' });
    } else {
      await rpc(this.relay.url, task.sender.api_key, 'message/send', {
        task_id: task.id,
        message: { role: 'user', parts: [{ type: 'text', text: 'That one.' }] },
      });
      this.open.push({ ...task, state: 'accepted' });
    }
  }
}

describe('the example consumer (examples/open-handoffs) against a real relay, on its own NATS credential', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let relay: RelayHarness;
  let agents: RegisteredTestAgent[];
  let child: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-open-handoffs-'));
    copyFileSync(join(ROOT, 'docker', 'nats', 'nats.conf'), join(dir, 'nats.conf'));
    writeNatsCredentials({ dir, subjectPrefix: '', consumers: [CONSUMER], rotate: [], retire: false });
    nats = await PrivateNatsServer.start({ configFile: join(dir, 'nats.conf') });
    relay = await RelayHarness.start({
      subjectPrefix: '',
      cleanupNatsUrl: null,
      env: { NATS_URL: nats.url },
      envOf: (holder) => ({ NATS_NKEY_SEED_FILE: seedFile(dir, holder) }),
    });
    agents = [];
    for (const name of ['alice', 'bob', 'carol']) agents.push(await registerAgent(relay, { handle: uniqueHandle(name, 'acme'), name }));
  }, 120000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await relay?.stop();
    await nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts from a snapshot taken while handoffs go on, follows the events after it, and ends with every agent’s open handoffs exactly', async () => {
    const activity = new Activity(relay, agents);
    for (let step = 0; step < 40; step++) await activity.step();

    // Handoffs keep going on (two at a time) while the example takes its snapshot, page by page.
    let going = true;
    const workers = [0, 1].map(async () => {
      while (going) await activity.step();
    });
    child = spawn(process.execPath, ['--enable-source-maps', '--import', REGISTER_TS, 'examples/open-handoffs/src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        NATS_URL: nats.url,
        NATS_NKEY_SEED_FILE: seedFile(dir, `consumer-${CONSUMER}`),
        CONSUMER_NAME: CONSUMER,
        RELAY_URL: relay.url,
        RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        SNAPSHOT_PAGE_SIZE: '3',
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const url = await eventually(() => {
      if (child!.exitCode !== null) throw new Error(`the example exited:\n${output}`);
      const found = /open-handoffs listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      expect(found).toBeDefined();
      return found!;
    }, 60000);
    const stepsAtStart = activity.steps;
    await eventually(() => expect(activity.steps).toBeGreaterThanOrEqual(stepsAtStart + 30), 60000);
    going = false;
    await Promise.all(workers);

    const expected = await openTasksOf(relay);
    expect(Object.keys(expected).length).toBeGreaterThan(0);
    await eventually(async () => {
      const response = await request(url).get('/open-handoffs').expect(200);
      expect(asComparable(response.body as Table)).toEqual(expected);
    }, 60000);
    const stats = (await request(url).get('/stats').expect(200)).body as Record<string, unknown>;
    console.log(`open-handoffs example: ${JSON.stringify(stats)}`);
  }, 240000);
});
