import type pg from 'pg';
import {
  AGENT_LIMITS,
  isTerminalState,
  PERMISSION_REQUEST_KIND,
  RelayError,
  TOOL_PROMPT_LIMITS,
  type AnswerToolPromptRequest,
  type PermissionRequest,
  type ToolPromptAnswerRecord,
} from '@app/contracts';
import type { LoadedTask } from '../tasks/store/change-write';
import { taskForPeople } from './task-for-people';
import type { TaskRow } from '../tasks/store/task-rows';
import { ANSWER_TOOL_PROMPT_SQL, TOOL_PROMPT_REQUEST_SQL } from './tool-prompts.sql';

function closed(task: TaskRow, requestId: string, why: string): RelayError {
  return new RelayError('tool_prompt_closed', `Tool prompt ${requestId} of task ${task.id} is closed: ${why}`, {
    task_id: task.id,
    request_id: requestId,
    state: task.state,
  });
}

/**
 * A person's answer to a tool prompt of a handoff whose tool prompts people answer
 * (docs/decisions/0031-tool-prompts-answered-by-people.md). The question must be one the task's
 * recipient asked (a message with a `permission_request` of that id), unanswered, before its
 * deadline, on a task that has not ended; the answer is kept on the task, where the recipient's
 * worker reads it, and audited with the person.
 */
export async function answerToolPrompt(
  pool: pg.Pool,
  request: AnswerToolPromptRequest,
  now = new Date(),
): Promise<{ task: TaskRow; artifacts: LoadedTask['artifacts'] }> {
  const { artifacts, ...current } = await taskForPeople(pool, request.task_id.toUpperCase());
  const requestId = request.request_id;
  if (!current.tool_prompts) {
    throw new RelayError(
      'not_for_approvers',
      `The sender of task ${current.id} answers its tool prompts: no tool-prompt rule of ${current.recipient_handle}'s trust policy matched it`,
      {
        task_id: current.id,
      },
    );
  }
  const { rows } = await pool.query<{ request: PermissionRequest | null }>({
    name: 'tasks-tool-prompt-request',
    text: TOOL_PROMPT_REQUEST_SQL,
    values: [current.id, requestId],
  });
  const asked = rows[0]?.request;
  if (!asked || asked.kind !== PERMISSION_REQUEST_KIND) {
    throw new RelayError('tool_prompt_not_found', `Task ${current.id} has no tool prompt ${requestId}`, { task_id: current.id, request_id: requestId });
  }
  if (isTerminalState(current.state)) throw closed(current, requestId, `the task is ${current.state}`);
  if (current.tool_prompts.answers.some((answer) => answer.request_id === requestId)) throw closed(current, requestId, 'it was answered already');
  const deadline = Date.parse(asked.expires_at);
  if (!Number.isNaN(deadline) && deadline <= now.getTime()) throw closed(current, requestId, `its deadline ${asked.expires_at} passed (it was denied)`);
  if (current.tool_prompts.answers.length >= TOOL_PROMPT_LIMITS.answersPerTask) {
    throw closed(current, requestId, `the task keeps at most ${TOOL_PROMPT_LIMITS.answersPerTask} answers`);
  }
  const reason = request.reason?.trim() || null;
  const answer: ToolPromptAnswerRecord = {
    request_id: requestId,
    decision: request.decision,
    reason,
    answered_by: request.answered_by,
    answered_at: now.toISOString(),
  };
  const { rows: changed } = await pool.query<TaskRow>({
    name: 'tasks-answer-tool-prompt',
    text: ANSWER_TOOL_PROMPT_SQL,
    values: [
      current.id,
      JSON.stringify(answer),
      now,
      requestId,
      TOOL_PROMPT_LIMITS.answersPerTask,
      request.answered_by.slice(0, AGENT_LIMITS.idChars),
      request.decision === 'allow' ? 'allow_tool' : 'deny_tool',
      `${asked.tool_name}${reason ? `: ${reason}` : ''}`,
    ],
  });
  if (!changed[0]) {
    const latest = await taskForPeople(pool, current.id);
    if (isTerminalState(latest.state)) throw closed(latest, requestId, `the task is ${latest.state}`);
    throw closed(latest, requestId, 'another person answered it first');
  }
  return { task: changed[0], artifacts };
}
