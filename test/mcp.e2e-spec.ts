import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Task, TaskListItem } from '@app/relay-client';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { McpAgent, mcpServerCommand, textOf } from './support/mcp-agent';
import { RelayHarness } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';

const INBOX_URI = 'agentrelay://inbox';
const DIFF =
  '--- a/src/api/users.ts\n+++ b/src/api/users.ts\n@@ -1,3 +1,4 @@\n-export const users = [];\n+export const users = { items: [], next_cursor: null };\n';

interface ListData {
  tasks: TaskListItem[];
  total_unread: number;
  has_more: boolean;
}

/** These tests start real processes, one per command: a loaded machine starts each of them slowly. */
const PROCESS_TEST_TIMEOUT_MS = 240_000;

describe('agentrelay-mcp: two agents as real stdio MCP servers against a running relay', () => {
  let relay: RelayHarness;
  let db: PgClient;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  let bobMcp: McpAgent;
  let frankMcp: McpAgent;
  const org = `mcp${Math.random().toString(36).slice(2, 7)}`;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new PgClient({ connectionString: testDatabaseUrl() });
    await db.connect();
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob', role: 'backend' });
    frank = await registerAgent(relay, {
      handle: uniqueHandle('frank', org),
      name: 'Frank',
      role: 'frontend',
      skills: ['react', 'tailwind'],
      description: 'Frontend agent',
    });
    [bobMcp, frankMcp] = await Promise.all([
      McpAgent.start(relay.url, bob.api_key, { AGENTRELAY_SESSION_ID: 'bob-session' }),
      // Ten minutes between polls: Frank's inbox subscription hears of changes from the live inbox stream.
      McpAgent.start(relay.url, frank.api_key, { AGENTRELAY_SESSION_ID: 'claude-frank-1', AGENTRELAY_INBOX_POLL_MS: '600000' }),
    ]);
  }, PROCESS_TEST_TIMEOUT_MS);

  afterAll(async () => {
    await bobMcp?.close();
    await frankMcp?.close();
    await db?.end();
    await relay?.stop();
  });

  it(
    'plays a whole handoff: send with a diff, inbox, accept, reply, read, complete',
    async () => {
      const updates: string[] = [];
      frankMcp.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
        updates.push(notification.params.uri);
      });
      await frankMcp.client.subscribeResource({ uri: INBOX_URI });

      const key = randomUUID();
      const sendArgs = {
        recipient: frank.agent.handle,
        message: 'Refactored /users API: it is paginated now.\nPlease update the web client.',
        intent: 'inform',
        artifacts: [
          { type: 'file_diff', path: 'src/api/users.ts', diff: DIFF },
          { type: 'test_command', command: 'npm test -- users', expected: 'all green' },
        ],
        idempotency_key: key,
      };
      const sent = await bobMcp.ok<{ task_id: string; state: string; idempotency_key: string }>('send_handoff', sendArgs);
      expect(sent.data).toMatchObject({ state: 'pending', recipient: frank.agent.handle, idempotency_key: key });
      expect(sent.text).toContain(`Sent handoff ${sent.data.task_id} to ${frank.agent.handle}`);
      const taskId = sent.data.task_id;

      // An agent's retry of the same call (same idempotency key) does not send a second handoff.
      const retried = await bobMcp.ok<{ task_id: string }>('send_handoff', sendArgs);
      expect(retried.data.task_id).toBe(taskId);
      const sentList = await bobMcp.ok<ListData>('list_sent', {});
      expect(sentList.data.tasks.filter((task) => task.summary_preview.startsWith('Refactored /users API'))).toHaveLength(1);

      // Frank's subscription hears of the new handoff without calling check_inbox.
      await eventually(() => expect(updates).toContain(INBOX_URI), 20000);
      const resource = await frankMcp.client.readResource({ uri: INBOX_URI });
      const snapshot = JSON.parse((resource.contents[0] as { text: string }).text) as { tasks: TaskListItem[] };
      expect(snapshot.tasks.map((task) => task.task_id)).toContain(taskId);

      const inbox = await frankMcp.ok<ListData>('check_inbox', {});
      const item = inbox.data.tasks.find((task) => task.task_id === taskId);
      expect(item).toMatchObject({ status: { state: 'pending' }, sender: { handle: bob.agent.handle }, intent: 'inform', unread_messages: 1 });
      expect(inbox.data.total_unread).toBeGreaterThanOrEqual(1);
      expect(inbox.text).toContain(`${taskId} [pending] from ${bob.agent.handle}`);
      expect(inbox.text).toContain('1 unread');

      const read = await frankMcp.ok<{ task: Task }>('get_thread', { task_id: taskId });
      expect(read.data.task).toMatchObject({
        task_id: taskId,
        status: { state: 'pending' },
        recipient: frank.agent.handle,
        artifacts: [
          { type: 'file_diff', path: 'src/api/users.ts', diff: DIFF },
          { type: 'test_command', command: 'npm test -- users', expected: 'all green' },
        ],
      });
      expect(read.text).toContain('file_diff src/api/users.ts');
      expect(read.text).toContain('+export const users = { items: [], next_cursor: null };');
      // Reading marked it read.
      const afterRead = await frankMcp.ok<ListData>('check_inbox', { status: ['pending'] });
      expect(afterRead.data.tasks.find((task) => task.task_id === taskId)?.unread_messages).toBe(0);

      const accepted = await frankMcp.ok<{ state: string; session_id: string }>('accept_handoff', { task_id: taskId });
      expect(accepted.data).toMatchObject({ state: 'accepted', session_id: 'claude-frank-1' });
      const audit = await db.query(`SELECT "session_id" FROM "tasks"."audit_log" WHERE "task_id" = $1 AND "transition" = 'accept'`, [taskId]);
      expect(audit.rows).toEqual([{ session_id: 'claude-frank-1' }]);

      const replied = await frankMcp.ok<{ sequence_no: number }>('reply', { task_id: taskId, message: 'On it. Should next_cursor be null on the last page?' });
      expect(replied.data.sequence_no).toBe(2);

      const bobView = await bobMcp.ok<{ task: Task }>('get_thread', { task_id: taskId });
      expect(bobView.data.task.status.state).toBe('accepted');
      expect(bobView.data.task.messages.map((message) => [message.from, message.body])).toEqual([
        [bob.agent.handle, sendArgs.message],
        [frank.agent.handle, 'On it. Should next_cursor be null on the last page?'],
      ]);
      expect(bobView.text).toContain(`#2 ${frank.agent.handle}`);

      const completed = await frankMcp.ok<{ state: string }>('complete_handoff', {
        task_id: taskId,
        result_summary: 'Web client reads items/next_cursor; npm test -- users passes.',
      });
      expect(completed.data.state).toBe('completed');

      const done = await bobMcp.ok<{ task: Task }>('get_thread', { task_id: taskId });
      expect(done.data.task).toMatchObject({
        status: { state: 'completed' },
        result_summary: 'Web client reads items/next_cursor; npm test -- users passes.',
      });
      expect(done.text).toContain('Result: Web client reads items/next_cursor; npm test -- users passes.');
      const finished = await bobMcp.ok<ListData>('list_sent', { status: ['completed'] });
      expect(finished.data.tasks.map((task) => task.task_id)).toContain(taskId);

      await frankMcp.client.unsubscribeResource({ uri: INBOX_URI });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'answers relay errors as tool errors naming the error symbol and what to do',
    async () => {
      const nobody = await bobMcp.call('send_handoff', { recipient: `nobody-${randomUUID().slice(0, 8)}@${org}`, message: 'Hello?' });
      expect(nobody.isError).toBe(true);
      expect(textOf(nobody)).toMatch(/^Relay error recipient_not_found \(-32004\): No agent with the handle nobody-/);
      expect(textOf(nobody)).toContain('find_agents');
      expect(nobody.structuredContent).toMatchObject({ error: { reason: 'recipient_not_found', code: -32004 } });

      const sent = await bobMcp.ok<{ task_id: string }>('send_handoff', { recipient: frank.agent.handle, message: 'Quick one', intent: 'ask_question' });
      const byTheSender = await bobMcp.call('accept_handoff', { task_id: sent.data.task_id });
      expect(byTheSender.isError).toBe(true);
      expect(textOf(byTheSender)).toContain('not_authorized_transition');
      expect(textOf(byTheSender)).toContain("Only the thread's recipient can do that.");

      await frankMcp.ok('accept_handoff', { task_id: sent.data.task_id });
      await frankMcp.ok('complete_handoff', { task_id: sent.data.task_id, result_summary: 'Answered.' });
      const late = await bobMcp.call('reply', { task_id: sent.data.task_id, message: 'One more thing' });
      expect(late.isError).toBe(true);
      expect(textOf(late)).toContain('Relay error thread_terminal (-32007)');
      expect(textOf(late)).toContain('What to do: The thread is completed; start a new handoff with send_handoff.');

      const missing = await bobMcp.call('get_thread', { task_id: '01J00000000000000000000000' });
      expect(missing.isError).toBe(true);
      expect(textOf(missing)).toContain('thread_not_found');

      const badInput = await bobMcp.call('send_handoff', { recipient: 'not a handle', message: 'x' });
      expect(badInput.isError).toBe(true);
      expect(textOf(badInput)).toMatch(/recipient/);

      const intruder = await McpAgent.start(relay.url, `ah_live_${'A'.repeat(32)}`);
      try {
        const refused = await intruder.call('check_inbox', {});
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain('Relay error unauthenticated');
        expect(textOf(refused)).toContain('AGENTRELAY_API_KEY');
      } finally {
        await intruder.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'declines, asks for input, and cancels',
    async () => {
      const declined = await bobMcp.ok<{ task_id: string }>('send_handoff', { recipient: frank.agent.handle, message: 'Rewrite it in Rust' });
      const rejection = await frankMcp.ok<{ state: string }>('decline_handoff', { task_id: declined.data.task_id, reason: 'Out of scope for the web team' });
      expect(rejection.data.state).toBe('rejected');
      const bobSees = await bobMcp.ok<{ task: Task }>('get_thread', { task_id: declined.data.task_id });
      expect(bobSees.data.task).toMatchObject({ status: { state: 'rejected' }, reason: 'Out of scope for the web team' });

      const proposal = await bobMcp.ok<{ task_id: string }>('send_handoff', {
        recipient: frank.agent.handle,
        message: 'Switch the users table to the paginated API',
        proposed_action: { description: 'Use next_cursor in UsersTable', target_files: ['apps/web/UsersTable.tsx'], rationale: 'The API is paginated now' },
      });
      await frankMcp.ok('accept_handoff', { task_id: proposal.data.task_id, session_id: 'explicit-session' });
      const asked = await frankMcp.ok<{ state: string }>('request_input', { task_id: proposal.data.task_id, question: 'Which page size?' });
      expect(asked.data.state).toBe('input_required');
      const waiting = await bobMcp.ok<ListData>('list_sent', { status: ['input_required'] });
      expect(waiting.data.tasks.map((task) => task.task_id)).toContain(proposal.data.task_id);
      await bobMcp.ok('reply', { task_id: proposal.data.task_id, message: '50 per page' });
      const resumed = await frankMcp.ok<{ task: Task }>('get_thread', { task_id: proposal.data.task_id });
      expect(resumed.data.task.status.state).toBe('accepted');
      expect(resumed.text).toContain('Proposed action: Use next_cursor in UsersTable');
      expect(resumed.data.task.intent).toBe('propose_action');
      expect(resumed.data.task.messages.map((message) => message.body)).toEqual([
        'Switch the users table to the paginated API',
        'Which page size?',
        '50 per page',
      ]);
      const audit = await db.query(`SELECT "session_id" FROM "tasks"."audit_log" WHERE "task_id" = $1 AND "transition" = 'accept'`, [proposal.data.task_id]);
      expect(audit.rows).toEqual([{ session_id: 'explicit-session' }]);

      const withdrawn = await bobMcp.ok<{ task_id: string }>('send_handoff', { recipient: frank.agent.handle, message: 'Never mind this one' });
      const cancelled = await bobMcp.ok<{ state: string }>('cancel_handoff', { task_id: withdrawn.data.task_id });
      expect(cancelled.data.state).toBe('cancelled');
      const open = await frankMcp.ok<ListData>('check_inbox', {});
      expect(open.data.tasks.map((task) => task.task_id)).not.toContain(withdrawn.data.task_id);
      const later = await frankMcp.ok<ListData>('check_inbox', { since: new Date(Date.now() + 3600_000).toISOString() });
      expect(later.data.tasks).toEqual([]);
      expect(later.text).toContain('none');
      const badSince = await frankMcp.call('check_inbox', { since: 'yesterday' });
      expect(badSince.isError).toBe(true);
      expect(textOf(badSince)).toContain('ISO 8601');
      const tooLate = await bobMcp.call('cancel_handoff', { task_id: proposal.data.task_id });
      expect(tooLate.isError).toBe(true);
      expect(textOf(tooLate)).toContain('invalid_transition');
      expect(textOf(tooLate)).toContain('get_thread');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'finds public agent cards by handle',
    async () => {
      const unknown = `ghost-${randomUUID().slice(0, 8)}@${org}`;
      const found = await bobMcp.ok<{ agents: Array<Record<string, unknown>>; not_found: string[] }>('find_agents', { handles: [frank.agent.handle, unknown] });
      expect(found.data.agents).toEqual([
        expect.objectContaining({ id: frank.agent.handle, name: 'Frank', description: 'Frontend agent', skills: ['react', 'tailwind'] }),
      ]);
      expect(found.data.agents[0]).not.toHaveProperty('email');
      expect(found.data.not_found).toEqual([unknown]);
      expect(found.text).toContain(`${frank.agent.handle}: Frank, frontend (Frontend agent); skills: react, tailwind`);
      expect(found.text).toContain(`${unknown}: no such agent`);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'lists the same tools to an MCP client and with --list-tools',
    async () => {
      const names = [
        'send_handoff',
        'check_inbox',
        'list_sent',
        'search_handoffs',
        'get_thread',
        'reply',
        'accept_handoff',
        'complete_handoff',
        'decline_handoff',
        'request_input',
        'cancel_handoff',
        'find_agents',
      ];
      const listed = (await bobMcp.client.listTools()).tools;
      expect(listed.map((tool) => tool.name).sort()).toEqual([...names].sort());
      for (const tool of listed) {
        expect(tool.description?.length).toBeGreaterThan(20);
        expect(tool.inputSchema.type).toBe('object');
      }

      const { command, args, cwd } = mcpServerCommand(['--list-tools', '--json']);
      const { stdout } = await promisify(execFile)(command, args, { cwd, env: {} });
      const printed = JSON.parse(stdout) as Array<{ name: string; description: string; inputSchema: unknown }>;
      expect(printed.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))).toEqual(
        listed.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
      );
      const human = await promisify(execFile)(command, mcpServerCommand(['--list-tools']).args, { cwd, env: {} });
      expect(human.stdout).toMatch(/^send_handoff\n {2}Hand work/);
      expect(human.stdout).toContain('input schema:');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
