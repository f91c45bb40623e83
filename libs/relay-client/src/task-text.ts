import { displayLine, displayText } from './display-text';
import type { SearchHighlight, SearchHit, TaskArtifact, Task, TaskHold, TaskListItem } from './relay-types';

/**
 * Plain-text renderings of tasks, read by people (the CLI) and by LLMs (the MCP tools). What the
 * other party wrote goes through displayText (bodies) or displayLine (everything shown on one line).
 */

type AnyArtifact = Task['artifacts'][number];

/** The lines of a text as it is shown (displayText ends every kind of line break with LF). */
function lineCount(text: string): number {
  return displayText(text).replace(/\n$/, '').split('\n').length;
}

/** One line naming an artifact, e.g. `file_diff src/api/users.py (12 lines)`. */
export function artifactLine(artifact: AnyArtifact): string {
  return displayLine(rawArtifactLine(artifact));
}

function rawArtifactLine(artifact: AnyArtifact): string {
  if (artifact.type === null) return `artifact ${String(artifact.name ?? artifact.artifact_id ?? '')}`.trim();
  const typed = artifact as TaskArtifact;
  const about = typed.description ? ` — ${typed.description}` : '';
  switch (typed.type) {
    case 'file_diff':
      return `file_diff ${typed.path} (${lineCount(typed.diff)} lines)${about}`;
    case 'file_ref': {
      const lines = typed.line_start !== undefined ? `:${typed.line_start}${typed.line_end !== undefined ? `-${typed.line_end}` : ''}` : '';
      return `file_ref ${typed.path}${lines}${typed.ref ? ` @ ${typed.ref}` : ''}${about}`;
    }
    case 'test_command':
      return `test_command \`${typed.command}\`${typed.cwd ? ` in ${typed.cwd}` : ''}${typed.expected ? ` (expect: ${typed.expected})` : ''}${about}`;
    case 'api_contract':
      return `api_contract ${typed.name}${typed.format ? ` (${typed.format})` : ''}${typed.endpoints?.length ? `: ${typed.endpoints.join(', ')}` : ''}${about}`;
    case 'link':
      return `link ${typed.url}${typed.title ? ` "${typed.title}"` : ''}${about}`;
  }
}

/**
 * The body of an artifact worth showing in full, or null: a diff, a contract, or what the parts of
 * an artifact from a standard A2A client hold (text as it is, data as JSON, a file by its name).
 */
function artifactBody(artifact: AnyArtifact): string | null {
  if (artifact.type === 'file_diff') return displayText((artifact as { diff: string }).diff);
  if (artifact.type === 'api_contract') return displayText((artifact as { spec: string }).spec);
  if (artifact.type !== null || !Array.isArray(artifact.parts)) return null;
  const bodies = (artifact.parts as unknown[]).map(partBody).filter((body): body is string => body !== null);
  return bodies.length > 0 ? displayText(bodies.join('\n')) : null;
}

function partBody(part: unknown): string | null {
  if (typeof part !== 'object' || part === null) return null;
  const { type, text, data, file } = part as { type?: unknown; text?: unknown; data?: unknown; file?: unknown };
  if (type === 'text' && typeof text === 'string') return text;
  if (type === 'data') return JSON.stringify(data, null, 2);
  if (type === 'file' && typeof file === 'object' && file !== null) {
    const { name, mime_type: mimeType, uri } = file as { name?: unknown; mime_type?: unknown; uri?: unknown };
    return `[file ${[name, mimeType, uri].filter((value) => typeof value === 'string').join(', ') || 'without a name'}]`;
  }
  return null;
}

/**
 * Lines on a held handoff (only its sender sees it held): the rule that held it, why, who may decide
 * and until when, or how the hold ended.
 */
export function holdLines(hold: TaskHold): string[] {
  const rule = `rule "${displayLine(hold.rule)}" of the recipient's trust policy`;
  if (hold.outcome !== 'held') {
    const comment = hold.comment ? `: ${displayLine(hold.comment)}` : '';
    return [`Was held for approval by ${rule}; ${hold.outcome}${hold.decided_at ? ` at ${hold.decided_at}` : ''}${comment}`];
  }
  const deciders = hold.four_eyes
    ? 'a person with the approver role signed in to the console who does not own the sending agent (four eyes)'
    : "a person with the approver role (the console's Approvals page, or an admin with the CLI's approvals commands)";
  return [
    `Held for approval by ${rule}: ${displayLine(hold.reason)}`,
    `  Decided by ${deciders}; denied by itself at ${hold.expires_at} unless someone decides first. The recipient sees it only once approved.`,
  ];
}

function fenced(text: string): string {
  const fence = text.includes('```') ? '~~~~' : '```';
  return `${fence}\n${text.replace(/\n$/, '')}\n${fence}`;
}

/** When the task reached its current state, if it is not pending. */
function stateTime(task: Task): string | null {
  switch (task.status.state) {
    case 'accepted':
    case 'input_required':
      return task.accepted_at;
    case 'completed':
      return task.completed_at;
    case 'cancelled':
      return task.cancelled_at;
    case 'failed':
      return task.failed_at;
    case 'rejected':
      return task.rejected_at;
    default:
      return null;
  }
}

/**
 * A whole task: header, proposed action, artifacts (diffs and contracts in full when `full`),
 * every message and the result.
 */
export function taskText(task: Task, options: { full?: boolean } = {}): string {
  const full = options.full ?? true;
  const since = stateTime(task);
  const lines = [
    `Handoff ${task.task_id}: ${task.status.state}${since ? ` since ${since}` : ''} (intent ${task.intent})`,
    `From ${displayLine(task.sender.handle)} (${displayLine(task.sender.name)}) to ${displayLine(task.recipient)}, created ${task.created_at}, updated ${task.updated_at}`,
    ...(task.hold ? holdLines(task.hold) : []),
  ];
  if (task.chain?.parent_task_id) {
    lines.push(`For handoff ${task.chain.parent_task_id}, depth ${task.chain.depth} of the chain started by ${task.chain.root_task_id}`);
  }
  if (task.proposed_action) {
    const action = task.proposed_action;
    lines.push(
      '',
      `Proposed action: ${displayLine(action.description)}`,
      `  target files: ${displayLine(action.target_files.join(', ')) || '-'}`,
      `  rationale: ${displayLine(action.rationale)}`,
    );
    if (action.suggested_diff)
      lines.push(full ? `  suggested diff:\n${fenced(displayText(action.suggested_diff))}` : `  suggested diff: ${lineCount(action.suggested_diff)} lines`);
  }
  if (task.artifacts.length > 0) {
    lines.push('', `Artifacts (${task.artifacts.length}):`);
    for (const artifact of task.artifacts) {
      lines.push(`- ${artifactLine(artifact)}`);
      const body = full ? artifactBody(artifact) : null;
      if (body !== null) lines.push(fenced(body));
    }
  }
  lines.push('', `Messages (${task.messages.length}):`);
  for (const message of task.messages) {
    lines.push(`#${message.sequence_no} ${displayLine(message.from)} at ${message.created_at}:`, indent(displayText(message.body)));
  }
  if (task.has_more_messages) {
    lines.push(`(${task.message_count} messages in all; the thread was cut to fit one reply: more follow #${task.next_after_sequence_no})`);
  }
  if (task.result_summary) lines.push('', `Result: ${displayText(task.result_summary)}`);
  if (task.reason) lines.push('', `Reason: ${displayText(task.reason)}`);
  return `${lines.join('\n')}\n`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** One line per listed task: id, state, who, unread count and the summary's start. */
export function taskLine(item: TaskListItem, counterpart: 'sender' | 'none' = 'sender'): string {
  const from = counterpart === 'sender' ? ` from ${displayLine(item.sender.handle)}` : '';
  const unread = item.unread_messages > 0 ? `, ${item.unread_messages} unread` : '';
  return `${item.task_id} [${item.status.state}]${from} (${item.intent}${unread}, updated ${item.updated_at}): ${oneLine(item.summary_preview, 120)}`;
}

/**
 * The first line of another party's text (after displayText), cut to `max` characters; `…` marks
 * anything left out. A cut never splits an emoji's surrogate pair.
 */
export function oneLine(text: string, max: number): string {
  const clean = displayText(text);
  const first = displayLine(clean.split('\n', 1)[0]);
  if (first.length > max) return `${first.slice(0, max - 1).replace(/[\ud800-\udbff]$/, '')}…`;
  return first.length < clean.trimEnd().length ? `${first} …` : first;
}

/** A search highlight as one line of text, each match between `«` and `»`. */
export function highlightLine(highlight: SearchHighlight): string {
  const where = highlight.source === 'message' ? `message #${highlight.sequence_no}` : `artifact ${displayLine(highlight.artifact_name ?? '')}`;
  const text = displayLine(highlight.fragments.map((fragment) => (fragment.match ? `«${fragment.text}»` : fragment.text)).join(''));
  return `${where}: ${text.replace(/\s+/g, ' ').trim()}`;
}

/** A search hit: its list line and where it matched, indented. */
export function searchHitText(hit: SearchHit): string {
  return [`- ${taskLine(hit, 'sender')}`, ...hit.highlights.map((highlight) => `    ${highlightLine(highlight)}`)].join('\n');
}
