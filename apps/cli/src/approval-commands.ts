import { displayLine, displayText, oneLine } from '@app/relay-client';
import type { AdminTaskDetail, AdminTaskPage, AdminTaskRow, ArtifactView, PendingToolPrompt, PendingToolPromptsReply, TaskView } from '@app/contracts';
import { CliError, EXIT, usage } from './cli-errors';

export const APPROVALS_USAGE = `  approvals list [--limit <n>]      handoffs held for approval by a hold rule, newest first
  approvals show <task>             one held handoff: its hold, messages, artifacts and proposed action
  approvals approve <task> [--comment "<text>"]
                                    deliver it to its recipient as if just sent
  approvals deny <task> --reason "<text>"
                                    reject it; the sender is told the reason
                                    (a rule with four_eyes needs a person signed in to the console:
                                    the admin token is refused)
  approvals tool-prompts [--limit <n>]
                                    coding agents' tool prompts waiting for a person (a tool-prompt
                                    rule of the recipient's trust policy gave them to approvers)
  approvals allow-tool <task> <request> [--reason "<text>"]
                                    let the agent use the tool
  approvals deny-tool <task> <request> [--reason "<text>"]
                                    refuse it; the agent is told the reason`;

/** The admin API as the admin commands call it (the admin token, JSON errors as CliErrors). */
export interface AdminCaller {
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
}

export interface ApprovalValues {
  comment?: string;
  reason?: string;
  limit?: string;
}

type Print = (value: unknown, human: string) => void;

const approvalPath = (taskId: string, suffix = ''): string => `/admin/approvals/${encodeURIComponent(taskId)}${suffix}`;

function need(positionals: string[], index: number, what: string): string {
  const value = positionals[index];
  if (!value) throw usage(`Missing ${what}.`);
  return value;
}

function reasonOf(error: CliError): string | undefined {
  const body = error.body as { error?: { reason?: unknown } } | undefined;
  return typeof body?.error?.reason === 'string' ? body.error.reason : undefined;
}

/** The relay's refusals of a decision, with what to do about each and the exit code of its kind. */
function explained(error: unknown, program: string): unknown {
  if (!(error instanceof CliError)) return error;
  switch (reasonOf(error)) {
    case 'four_eyes':
      return new CliError(
        `${error.message}\nThe rule needs four eyes: a person other than the sending agent's owner decides it in the console (/console/approvals/<task>); the admin token the CLI uses is refused.`,
        EXIT.apiError,
        error.body,
      );
    case 'not_held':
      return new CliError(
        `${error.message}\nIt was decided, withdrawn or expired already: "${program} approvals show <task>" says how it ended.`,
        EXIT.conflict,
        error.body,
      );
    case 'tool_prompt_closed':
      return new CliError(
        `${error.message}\n"${program} approvals tool-prompts" lists the tool prompts still waiting for an answer.`,
        EXIT.conflict,
        error.body,
      );
    case 'not_for_approvers':
      return new CliError(
        `${error.message}\nThe handoff's sender answers it on the handoff ("allow <request>" / "deny <request>: <reason>").`,
        EXIT.conflict,
        error.body,
      );
    case 'tool_prompt_not_found':
      return new CliError(error.message, EXIT.notFound, error.body);
    case 'state_changed':
      return new CliError(error.message, EXIT.conflict, error.body);
    case 'task_not_found':
      return new CliError(error.message, EXIT.notFound, error.body);
    default:
      return error;
  }
}

function table(rows: string[][]): string {
  const cells = rows.map((row) => row.map(displayLine));
  const widths = cells[0].map((_, column) => Math.max(...cells.map((row) => row[column].length)));
  return `${cells
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

function queueTable(items: AdminTaskRow[]): string {
  if (items.length === 0) return 'No handoff is held for approval.\n';
  const rows = items.map((row) => [
    row.id,
    row.sender.handle,
    row.recipient.handle,
    row.intent,
    row.hold ? `${row.hold.rule}${row.hold.four_eyes ? ' (four eyes)' : ''}` : '-',
    row.created_at,
    row.hold?.expires_at ?? '-',
    oneLine(row.summary, 50),
  ]);
  return `${table([['TASK', 'FROM', 'TO', 'INTENT', 'RULE', 'HELD SINCE', 'EXPIRES', 'SUMMARY'], ...rows])}${items.length} held handoff${items.length === 1 ? '' : 's'}.\n`;
}

function toolPromptTable(items: PendingToolPrompt[]): string {
  if (items.length === 0) return 'No tool prompt is waiting for a person.\n';
  const rows = items.map((item) => [
    item.task_id,
    item.request.request_id,
    item.recipient,
    item.request.tool_name,
    oneLine(JSON.stringify(item.request.tool_input ?? item.request.tool_input_preview ?? null), 50),
    `${item.rule}${item.four_eyes ? ' (four eyes)' : ''}`,
    item.request.expires_at,
  ]);
  return `${table([['TASK', 'REQUEST', 'AGENT', 'TOOL', 'INPUT', 'RULE', 'EXPIRES'], ...rows])}${items.length} tool prompt${items.length === 1 ? '' : 's'} waiting.\n`;
}

/** Text another party wrote, indented, each line made safe for a terminal. */
function block(text: string, indent = '    '): string {
  return displayText(text)
    .split('\n')
    .map((line) => `${indent}${displayLine(line)}`)
    .join('\n');
}

function artifactText(artifact: ArtifactView): string {
  const title = `  [${artifact.type ?? 'artifact'}] ${displayLine(artifact.name ?? String(artifact.fields.path ?? artifact.artifact_id))}`;
  const diff = artifact.fields.diff;
  if (typeof diff === 'string') return `${title}\n${block(diff)}`;
  const fields = Object.entries(artifact.fields).map(([key, value]) => `    ${key}: ${displayLine(typeof value === 'string' ? value : JSON.stringify(value))}`);
  return [title, ...fields].join('\n');
}

function describeHeld(detail: AdminTaskDetail): string {
  const { task } = detail;
  const hold = task.hold;
  const lines = [
    `${task.id}  ${displayLine(task.summary)}`,
    `  from:       ${displayLine(task.sender.handle)} (${displayLine(task.sender.name)})`,
    `  to:         ${displayLine(task.recipient.handle)} (${displayLine(task.recipient.name)})`,
    `  intent:     ${task.intent}`,
    `  state:      ${task.state}${task.reason ? ` (${displayLine(task.reason)})` : ''}`,
    `  held since: ${task.created_at}`,
  ];
  if (hold) {
    lines.push(
      `  rule:       ${displayLine(hold.rule)}${hold.four_eyes ? " (four eyes: not the sending agent's owner, not the admin token)" : ''}`,
      `  expires:    ${hold.expires_at}`,
      `  outcome:    ${hold.outcome}${hold.decided_at ? ` at ${hold.decided_at}` : ''}${hold.comment ? `: ${displayLine(hold.comment)}` : ''}`,
    );
  }
  const action = task.proposed_action;
  if (action) {
    lines.push('', 'Proposed action:', block(action.description, '  '));
    if (action.rationale) lines.push(`  why: ${displayLine(action.rationale)}`);
    if (action.target_files.length) lines.push(`  target files: ${action.target_files.map(displayLine).join(', ')}`);
    if (action.suggested_diff) lines.push('  suggested diff:', block(action.suggested_diff));
  }
  const messages = detail.timeline.filter((entry) => entry.message);
  if (messages.length) {
    lines.push('', 'Messages:');
    for (const entry of messages) lines.push(`  ${entry.at} ${displayLine(entry.actor ?? 'the relay')}:`, block(entry.message?.body ?? ''));
  }
  if (task.artifacts.length) lines.push('', 'Artifacts:', ...task.artifacts.map(artifactText));
  return `${lines.join('\n')}\n`;
}

function decided(task: TaskView, decision: 'approve' | 'deny'): string {
  return decision === 'approve'
    ? `Approved ${task.id}: delivered to ${displayLine(task.recipient.handle)} as if just sent.\n`
    : `Denied ${task.id}: ${displayLine(task.sender.handle)} is told "${displayLine(task.reason ?? 'Denied by an approver')}".\n`;
}

async function answerToolPrompt(
  api: AdminCaller,
  positionals: string[],
  values: ApprovalValues,
  decision: 'allow' | 'deny',
  print: Print,
  program: string,
): Promise<number> {
  const taskId = need(positionals, 1, 'the task id');
  const requestId = need(positionals, 2, `the request id (from "${program} approvals tool-prompts")`);
  const reason = (values.reason ?? values.comment)?.trim();
  const path = approvalPath(taskId, `/tool-prompts/${encodeURIComponent(requestId)}/${decision}`);
  const task = await api.call<TaskView>('POST', path, reason ? { reason } : {});
  const verb = decision === 'allow' ? 'Allowed' : 'Denied';
  print(
    task,
    `${verb} tool prompt ${displayLine(requestId)} of ${task.id}: ${displayLine(task.recipient.handle)}'s agent is told${reason ? ` "${displayLine(reason)}"` : ''}.\n`,
  );
  return EXIT.ok;
}

/** `agentrelay approvals list|show|approve|deny|tool-prompts|allow-tool|deny-tool`: held handoffs and tool prompts of the admin API (docs/operations.md#approvals). */
export async function runApprovalsCommand(
  api: AdminCaller,
  positionals: string[],
  values: ApprovalValues,
  print: Print,
  program = 'agentrelay',
): Promise<number> {
  const action = need(positionals, 0, 'the approvals action (list, show, approve, deny, tool-prompts, allow-tool or deny-tool)');
  try {
    switch (action) {
      case 'list': {
        const limit = values.limit === undefined ? 100 : Number(values.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw usage('--limit must be an integer from 1 to 100.');
        const page = await api.call<AdminTaskPage>('GET', `/admin/approvals?limit=${limit}`);
        print(page, queueTable(page.items));
        return EXIT.ok;
      }
      case 'show': {
        const detail = await api.call<AdminTaskDetail>('GET', approvalPath(need(positionals, 1, 'the task id')));
        print(detail, describeHeld(detail));
        return EXIT.ok;
      }
      case 'approve': {
        const taskId = need(positionals, 1, 'the task id');
        if (values.reason !== undefined) throw usage('approve takes --comment; --reason goes with deny.');
        const task = await api.call<TaskView>('POST', approvalPath(taskId, '/approve'), values.comment ? { comment: values.comment } : {});
        print(task, decided(task, 'approve'));
        return EXIT.ok;
      }
      case 'deny': {
        const taskId = need(positionals, 1, 'the task id');
        const reason = (values.reason ?? values.comment)?.trim();
        if (!reason) throw usage('deny needs --reason "<text>": the sender is told it.');
        const task = await api.call<TaskView>('POST', approvalPath(taskId, '/deny'), { comment: reason });
        print(task, decided(task, 'deny'));
        return EXIT.ok;
      }
      case 'tool-prompts': {
        const limit = values.limit === undefined ? 50 : Number(values.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw usage('--limit must be an integer from 1 to 200.');
        const reply = await api.call<PendingToolPromptsReply>('GET', `/admin/approvals/tool-prompts?limit=${limit}`);
        print(reply, toolPromptTable(reply.items));
        return EXIT.ok;
      }
      case 'allow-tool':
        return await answerToolPrompt(api, positionals, values, 'allow', print, program);
      case 'deny-tool':
        return await answerToolPrompt(api, positionals, values, 'deny', print, program);
      default:
        throw usage(`Unknown approvals action "${action}".`);
    }
  } catch (error) {
    throw explained(error, program);
  }
}
