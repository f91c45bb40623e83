import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ARTIFACT_TYPES, TASK_LIMITS, TYPED_ARTIFACT_FIELDS, type ArtifactField } from '@app/contracts/model';
import {
  TASK_INTENTS,
  TASK_STATES,
  OPEN_STATES,
  artifactLine,
  displayLine,
  searchHitText,
  taskLine,
  taskText,
  type TaskArtifact,
  type RelayClient,
  type TaskListItem,
} from '@app/relay-client';
import { TOOL_ANNOTATIONS } from './tool-annotations';
import { toolError, toolResult } from './tool-results';

const taskId = z.string().min(1).max(TASK_LIMITS.taskIdChars).describe('The handoff (task) id, e.g. 01J9Z3…');
const handle = z
  .string()
  .regex(/^[^\s@]+@[^\s@]+$/, 'a handle looks like name@org')
  .describe('An agent handle, name@org');
const states = z.array(z.enum(TASK_STATES)).min(1);
const since = z
  .string()
  .refine((value) => /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value)), 'must be an ISO 8601 time, e.g. 2026-04-25T10:00:00Z')
  .describe('ISO 8601 time: only threads created or updated after it');
const limit = z.number().int().min(1).max(TASK_LIMITS.listMaxLimit).describe(`At most this many threads (default ${TASK_LIMITS.listDefaultLimit})`);
const idempotencyKey = z
  .string()
  .min(1)
  .max(TASK_LIMITS.idempotencyKeyChars)
  .describe(
    'A unique key for this message (e.g. a UUID). Pass the same key again when retrying the call: the relay then never sends it twice. Made up for you when omitted.',
  );

/** A typed artifact's field as the tool's input schema states it (the tasks service checks the rest). */
function fieldSchema(field: ArtifactField): z.ZodType {
  const schema =
    field.kind === 'integer'
      ? z.number().int().min(0)
      : field.kind === 'string[]'
        ? z.array(z.string())
        : field.kind === 'url'
          ? z.url({ protocol: /^https?$/ })
          : z.string().min(1);
  const present = field.required ? schema : schema.optional();
  return field.about ? present.describe(field.about) : present;
}

const artifact = z.discriminatedUnion(
  'type',
  ARTIFACT_TYPES.map((type) =>
    z.object({
      type: z.literal(type),
      ...Object.fromEntries(Object.entries(TYPED_ARTIFACT_FIELDS[type]).map(([name, field]) => [name, fieldSchema(field)])),
    }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

const proposedAction = z
  .object({
    description: z.string().min(1).describe('The change you propose'),
    target_files: z.array(z.string()).describe('Paths the recipient would touch'),
    rationale: z.string().min(1).describe('Why the change is needed'),
    suggested_diff: z.string().optional().describe('A unified diff the recipient may apply'),
  })
  .describe('Required with intent propose_action, not allowed otherwise');

export interface TaskToolsOptions {
  /** Recorded by accept_handoff when the call names no session id. */
  sessionId: string;
  /** Told after a tool changed a task, so inbox subscribers hear of it at once. */
  onTaskChanged?: () => void;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function listText(items: TaskListItem[], heading: string, role: 'recipient' | 'sender'): string {
  if (items.length === 0) return `${heading}: none.`;
  const unread = items.reduce((sum, item) => sum + item.unread_messages, 0);
  const lines = items.map((item) => `- ${taskLine(item, role === 'recipient' ? 'sender' : 'none')}`);
  return `${heading}: ${plural(items.length, 'thread')}, ${plural(unread, 'unread message')}.\n${lines.join('\n')}`;
}

/** Registers the agent's task tools: one relay call each (find_agents one per handle). */
export function registerTaskTools(server: McpServer, client: RelayClient, options: TaskToolsOptions): void {
  const run = async (work: () => Promise<CallToolResult>, changesTask = false): Promise<CallToolResult> => {
    try {
      const result = await work();
      if (changesTask) options.onTaskChanged?.();
      return result;
    } catch (error) {
      return toolError(error);
    }
  };

  server.registerTool(
    'send_handoff',
    {
      title: 'Send a handoff',
      description:
        "Hand work, a question or a proposed change to another agent: creates a thread in the recipient's inbox, with optional artifacts (diffs, file references, test commands, API contracts, links).",
      inputSchema: {
        recipient: handle.describe('Handle of the agent to hand off to, name@org'),
        message: z
          .string()
          .min(1)
          .max(TASK_LIMITS.textPartChars)
          .describe('What you need or are telling them, self-contained: the first line becomes the summary'),
        intent: z
          .enum(TASK_INTENTS)
          .optional()
          .describe(
            'inform (FYI), ask_question (needs an answer) or propose_action (with proposed_action); default: propose_action when proposed_action is given, else inform',
          ),
        proposed_action: proposedAction.optional(),
        artifacts: z.array(artifact).max(TASK_LIMITS.artifactsPerRequest).optional().describe('Structured attachments'),
        idempotency_key: idempotencyKey.optional(),
        for_task: z
          .string()
          .min(1)
          .max(TASK_LIMITS.taskIdChars)
          .optional()
          .describe('The task id of a handoff you received (or sent) that this one is made for: the relay links them into one chain'),
      },
      annotations: TOOL_ANNOTATIONS.send_handoff,
    },
    (args) =>
      run(async () => {
        const created = await client.createTask({
          recipient: args.recipient,
          text: args.message,
          intent: args.intent ?? (args.proposed_action ? 'propose_action' : 'inform'),
          ...(args.proposed_action ? { proposedAction: args.proposed_action } : {}),
          ...(args.artifacts ? { artifacts: args.artifacts as TaskArtifact[] } : {}),
          ...(args.idempotency_key ? { idempotencyKey: args.idempotency_key } : {}),
          ...(args.for_task ? { parentTaskId: args.for_task } : {}),
        });
        const attached = args.artifacts?.length
          ? ` with ${plural(args.artifacts.length, 'artifact')} (${args.artifacts.map((item) => artifactLine(item as TaskArtifact)).join('; ')})`
          : '';
        return toolResult(
          `Sent handoff ${created.task_id} to ${args.recipient}${attached}; it is ${created.status.state}. Idempotency key: ${created.idempotency_key}.`,
          {
            task_id: created.task_id,
            recipient: args.recipient,
            state: created.status.state,
            created_at: created.created_at,
            idempotency_key: created.idempotency_key,
            ...(created.chain ? { chain: created.chain } : {}),
          },
        );
      }, true),
  );

  server.registerTool(
    'check_inbox',
    {
      title: 'Check inbox',
      description:
        'List handoffs addressed to you that are still open (pending, accepted, input_required by default), newest first, with unread message counts.',
      inputSchema: {
        status: states.optional().describe('Only these states (default: pending, accepted, input_required)'),
        since: since.optional(),
        limit: limit.optional(),
      },
      annotations: TOOL_ANNOTATIONS.check_inbox,
    },
    (args) =>
      run(async () => {
        const status = args.status ?? [...OPEN_STATES];
        const page = await client.listTasks({ role: 'recipient', status, ...(args.since ? { since: args.since } : {}), limit: args.limit ?? 50 });
        const totalUnread = page.items.reduce((sum, item) => sum + item.unread_messages, 0);
        const more = page.next_cursor ? '\nMore threads match: narrow with status or since.' : '';
        return toolResult(`${listText(page.items, `Inbox (${status.join(', ')})`, 'recipient')}${more}`, {
          tasks: page.items,
          total_unread: totalUnread,
          has_more: page.next_cursor !== null,
        });
      }),
  );

  server.registerTool(
    'list_sent',
    {
      title: 'List sent handoffs',
      description: 'List the handoffs you sent and where each stands (state, replies you have not read), newest first.',
      inputSchema: {
        status: states.optional().describe('Only these states (default: all)'),
        since: since.optional(),
        limit: limit.optional(),
      },
      annotations: TOOL_ANNOTATIONS.list_sent,
    },
    (args) =>
      run(async () => {
        const page = await client.listTasks({
          role: 'sender',
          ...(args.status ? { status: args.status } : {}),
          ...(args.since ? { since: args.since } : {}),
          limit: args.limit ?? 50,
        });
        const more = page.next_cursor ? '\nMore threads match: narrow with status or since.' : '';
        return toolResult(`${listText(page.items, 'Sent handoffs', 'sender')}${more}`, {
          tasks: page.items,
          total_unread: page.items.reduce((sum, item) => sum + item.unread_messages, 0),
          has_more: page.next_cursor !== null,
        });
      }),
  );

  server.registerTool(
    'search_handoffs',
    {
      title: 'Search handoffs',
      description:
        'Full-text search over the handoffs you sent or received (message text and artifact names), best match first, with the matching words marked «like this». Use it to find an earlier thread about a topic.',
      inputSchema: {
        query: z.string().trim().min(1).max(500).describe('Words to look for; "quoted phrase", -word to exclude, OR between alternatives'),
        role: z
          .enum(['recipient', 'sender', 'either'])
          .optional()
          .describe('Only handoffs you received (recipient), sent (sender), or both (either, the default)'),
        status: states.optional().describe('Only these states (default: all)'),
        limit: z.number().int().min(1).max(100).optional().describe('At most this many threads (default 20)'),
      },
      annotations: TOOL_ANNOTATIONS.search_handoffs,
    },
    (args) =>
      run(async () => {
        const page = await client.searchTasks(args.query, {
          ...(args.role ? { role: args.role } : {}),
          ...(args.status ? { status: args.status } : {}),
          limit: args.limit ?? 20,
        });
        const heading = page.items.length === 0 ? `No handoffs match "${args.query}".` : `${plural(page.items.length, 'thread')} match "${args.query}":`;
        const more = page.next_cursor ? '\nMore threads match: narrow the words, role or status.' : '';
        return toolResult(`${heading}${page.items.length > 0 ? `\n${page.items.map(searchHitText).join('\n')}` : ''}${more}`, {
          tasks: page.items,
          has_more: page.next_cursor !== null,
        });
      }),
  );

  server.registerTool(
    'get_thread',
    {
      title: 'Read a thread',
      description: 'Read a whole handoff thread: state, every message, artifacts (diffs in full), proposed action and result. Marks it read.',
      inputSchema: { task_id: taskId },
      annotations: TOOL_ANNOTATIONS.get_thread,
    },
    (args) =>
      run(async () => {
        const task = await client.getTask(args.task_id);
        return toolResult(taskText(task, { full: true }), { task });
      }, true),
  );

  server.registerTool(
    'reply',
    {
      title: 'Reply in a thread',
      description:
        'Add a message to a handoff thread you are part of (answer a question, give requested input, report progress). Not possible once the thread is finished.',
      inputSchema: {
        task_id: taskId,
        message: z.string().min(1).max(TASK_LIMITS.textPartChars).describe('Your message'),
        idempotency_key: idempotencyKey.optional(),
      },
      annotations: TOOL_ANNOTATIONS.reply,
    },
    (args) =>
      run(async () => {
        const appended = await client.appendMessage(args.task_id, args.message, args.idempotency_key);
        return toolResult(`Replied in ${appended.task_id} (message #${appended.sequence_no}). Idempotency key: ${appended.idempotency_key}.`, {
          task_id: appended.task_id,
          message_id: appended.message_id,
          sequence_no: appended.sequence_no,
          created_at: appended.created_at,
          idempotency_key: appended.idempotency_key,
        });
      }, true),
  );

  server.registerTool(
    'accept_handoff',
    {
      title: 'Accept a handoff',
      description: 'Take on a pending handoff addressed to you (records your session id); the sender sees that you are working on it.',
      inputSchema: {
        task_id: taskId,
        session_id: z
          .string()
          .min(1)
          .max(TASK_LIMITS.sessionIdChars)
          .optional()
          .describe("Your session's id, for the audit log (default: this server's session)"),
      },
      annotations: TOOL_ANNOTATIONS.accept_handoff,
    },
    (args) =>
      run(async () => {
        const sessionId = args.session_id ?? options.sessionId;
        const result = await client.transition(args.task_id, 'accept', { sessionId });
        return toolResult(
          `Accepted ${result.task_id}; it is ${result.status.state}. Read it with get_thread, reply as you go, and finish with complete_handoff.`,
          {
            task_id: result.task_id,
            state: result.status.state,
            session_id: sessionId,
            accepted_at: result.accepted_at,
          },
        );
      }, true),
  );

  server.registerTool(
    'complete_handoff',
    {
      title: 'Complete a handoff',
      description: 'Finish a handoff you accepted, with a summary of what you did; the sender is told.',
      inputSchema: {
        task_id: taskId,
        result_summary: z.string().min(1).max(TASK_LIMITS.textPartChars).describe('What was done and how to check it'),
      },
      annotations: TOOL_ANNOTATIONS.complete_handoff,
    },
    (args) =>
      run(async () => {
        const result = await client.transition(args.task_id, 'complete', { resultSummary: args.result_summary });
        return toolResult(`Completed ${result.task_id}.`, {
          task_id: result.task_id,
          state: result.status.state,
          completed_at: result.completed_at,
          result_summary: args.result_summary,
        });
      }, true),
  );

  server.registerTool(
    'decline_handoff',
    {
      title: 'Decline a handoff',
      description: 'Turn down a pending handoff addressed to you, saying why; the thread ends as rejected.',
      inputSchema: { task_id: taskId, reason: z.string().min(1).max(TASK_LIMITS.reasonChars).optional().describe('Why you decline') },
      annotations: TOOL_ANNOTATIONS.decline_handoff,
    },
    (args) =>
      run(async () => {
        const result = await client.transition(args.task_id, 'decline', args.reason ? { reason: args.reason } : {});
        return toolResult(`Declined ${result.task_id}; it is ${result.status.state}.`, {
          task_id: result.task_id,
          state: result.status.state,
          reason: args.reason ?? null,
        });
      }, true),
  );

  server.registerTool(
    'request_input',
    {
      title: 'Ask the sender for input',
      description:
        'Ask the sender of a handoff you accepted a question you need answered before you can go on; the thread waits (input_required) until they reply.',
      inputSchema: { task_id: taskId, question: z.string().min(1).max(TASK_LIMITS.textPartChars).describe('What you need from the sender') },
      annotations: TOOL_ANNOTATIONS.request_input,
    },
    (args) =>
      run(async () => {
        const result = await client.transition(args.task_id, 'request_input', { text: args.question });
        return toolResult(`Asked the sender of ${result.task_id}; it is ${result.status.state} until they reply.`, {
          task_id: result.task_id,
          state: result.status.state,
        });
      }, true),
  );

  server.registerTool(
    'cancel_handoff',
    {
      title: 'Cancel a handoff',
      description: 'Withdraw a handoff you sent that nobody has accepted yet (pending).',
      inputSchema: { task_id: taskId },
      annotations: TOOL_ANNOTATIONS.cancel_handoff,
    },
    (args) =>
      run(async () => {
        const result = await client.cancel(args.task_id);
        return toolResult(`Cancelled ${result.task_id}.`, { task_id: result.task_id, state: result.status.state, updated_at: result.updated_at });
      }, true),
  );

  server.registerTool(
    'find_agents',
    {
      title: 'Find agents',
      description: "Look up agents' public cards by handle (name, description, skills, role) to check whom to hand work to.",
      inputSchema: { handles: z.array(handle).min(1).max(20).describe('Handles to look up, name@org') },
      annotations: TOOL_ANNOTATIONS.find_agents,
    },
    (args) =>
      run(async () => {
        const cards = await Promise.all(args.handles.map(async (wanted) => ({ handle: wanted, card: await client.agentCard(wanted) })));
        const lines = cards.map(({ handle: wanted, card }) => {
          if (!card) return `- ${wanted}: no such agent`;
          const role = typeof card.metadata.role === 'string' ? `, ${card.metadata.role}` : '';
          const skills = card.skills.length ? `; skills: ${card.skills.join(', ')}` : '';
          return displayLine(`- ${card.id}: ${card.name}${role}${card.description ? ` (${card.description})` : ''}${skills}`);
        });
        return toolResult(lines.join('\n'), {
          agents: cards.filter((entry) => entry.card !== null).map((entry) => entry.card),
          not_found: cards.filter((entry) => entry.card === null).map((entry) => entry.handle),
        });
      }),
  );
}
