import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { adminApi } from '../../api/admin-api';
import type { PendingToolPrompt } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { TimeStamp } from '../../components/time-stamp';
import { toolPromptRoleRefusal } from '../../lib/decision-refusal';
import { toolInputText } from '../../lib/tool-input';
import { useRole } from '../../session/session-context';
import { ToolPromptAnswer } from './tool-prompt-answer';

const promptKey = (prompt: PendingToolPrompt): string => `${prompt.task_id} ${prompt.request.request_id}`;

function PromptsTable({
  prompts,
  answering,
  onAnswered,
}: {
  prompts: PendingToolPrompt[];
  answering: boolean;
  onAnswered: (prompt: PendingToolPrompt) => (text: string) => void;
}) {
  return (
    <table className="table">
      <caption>Tool prompts waiting for a person, oldest first</caption>
      <thead>
        <tr>
          <th scope="col">Asked</th>
          <th scope="col">Sender → recipient</th>
          <th scope="col">Tool and input</th>
          <th scope="col">Rule</th>
          <th scope="col">Deadline</th>
          {answering && <th scope="col">Answer</th>}
        </tr>
      </thead>
      <tbody>
        {prompts.map((prompt) => (
          <tr key={promptKey(prompt)}>
            <td>
              <TimeStamp at={prompt.asked_at} />
            </td>
            <td>
              <Link to={`/handoffs/${encodeURIComponent(prompt.task_id)}`}>
                {prompt.sender} → {prompt.recipient}
              </Link>
              {prompt.summary && <p className="hint">{prompt.summary}</p>}
            </td>
            <td>
              <code>{prompt.request.tool_name}</code>
              <pre className="tool-input">{toolInputText(prompt.request)}</pre>
            </td>
            <td>
              {prompt.rule}
              {prompt.four_eyes ? ' (four eyes)' : ''}
            </td>
            <td>
              <TimeStamp at={prompt.request.expires_at} />
            </td>
            {answering && (
              <td>
                <ToolPromptAnswer prompt={prompt} onAnswered={onAnswered(prompt)} />
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** How often the queue of tool prompts is read again (a question writes no live event the console follows). */
const TOOL_PROMPTS_REFRESH_MS = 15_000;

/**
 * The tool prompts people answer: the coding agents' questions on handoffs a tool-prompt rule of
 * their recipient's trust policy gives to the approvers, with Allow and Deny for who may answer.
 */
export function ToolPromptsSection() {
  const { role } = useRole();
  const queryClient = useQueryClient();
  const [answered, setAnswered] = useState<ReadonlySet<string>>(new Set());
  const [result, setResult] = useState<string | null>(null);
  const prompts = useQuery({ queryKey: ['approvals', 'tool-prompts'], queryFn: () => adminApi.listToolPrompts(), refetchInterval: TOOL_PROMPTS_REFRESH_MS });
  const cannot = toolPromptRoleRefusal(role);
  const open = (prompts.data?.items ?? []).filter((prompt) => !answered.has(promptKey(prompt)));

  const onAnswered = (prompt: PendingToolPrompt) => (text: string) => {
    setResult(text);
    setAnswered((keys) => new Set(keys).add(promptKey(prompt)));
    void queryClient.invalidateQueries({ queryKey: ['approvals', 'tool-prompts'] });
    void queryClient.invalidateQueries({ queryKey: ['task', prompt.task_id] });
  };
  return (
    <section aria-labelledby="tool-prompts-title">
      <h2 id="tool-prompts-title">Tool prompts</h2>
      <p className="hint">
        A tool-prompt rule of the recipient&apos;s trust policy gives these questions to people instead of the handoff&apos;s sender: the recipient&apos;s
        coding agent waits to use the tool until a person allows it, or goes on without it when denied. Unanswered by its deadline, a question is denied.
      </p>
      {cannot && (
        <p className="notice" role="note" data-testid="tool-prompts-refused">
          {cannot}
        </p>
      )}
      {result && (
        <p role="status" className="notice" data-testid="tool-prompt-result">
          {result}
        </p>
      )}
      {prompts.isPending && <p role="status">Loading the tool prompts…</p>}
      {prompts.isError && <ErrorMessage error={prompts.error} />}
      {prompts.isSuccess &&
        (open.length === 0 ? (
          <p>No tool prompt is waiting for a person.</p>
        ) : (
          <PromptsTable prompts={open} answering={cannot === null} onAnswered={onAnswered} />
        ))}
    </section>
  );
}
