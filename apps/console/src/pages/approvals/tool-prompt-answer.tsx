import { useId, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import { ApiError } from '../../api/api-error';
import { TOOL_PROMPT_LIMITS, type PendingToolPrompt, type PermissionDecision, type TaskView } from '../../api/types';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';
import { toolPromptRefusal } from '../../lib/decision-refusal';
import { useRole, useSession } from '../../session/session-context';

/** What answering did, in a sentence, from the task the relay answered with. */
function answeredText(prompt: PendingToolPrompt, decision: PermissionDecision, task: TaskView): string {
  const { request_id: requestId, tool_name: tool } = prompt.request;
  const answer = task.tool_prompts?.answers.find((entry) => entry.request_id === requestId);
  if (decision === 'allow') return `Allowed: ${prompt.recipient}'s coding agent may use ${tool} (request ${requestId}).`;
  const reason = answer?.reason;
  return `Denied: ${prompt.recipient}'s coding agent may not use ${tool} (request ${requestId})${reason ? `; it is told "${reason}"` : ''}.`;
}

/**
 * Allow or deny one tool prompt, with an optional reason (what the coding agent is told), each
 * after a confirmation; four eyes explained instead when they keep this person from answering.
 * `onAnswered` is also told when the relay says the question is closed (answered already, past its
 * deadline, its handoff ended): either way it leaves the queue.
 */
export function ToolPromptAnswer({ prompt, onAnswered }: { prompt: PendingToolPrompt; onAnswered: (text: string) => void }) {
  const decider = useRole().deciderFor(prompt.recipient);
  const { state } = useSession();
  const person = state.status === 'signed_in' ? state.session.person : null;
  const reasonId = useId();
  const [reason, setReason] = useState('');
  const [asking, setAsking] = useState<PermissionDecision | null>(null);
  const fourEyes = prompt.four_eyes && person !== null;
  const owner = useQuery({ queryKey: ['agent', prompt.sender], queryFn: () => adminApi.getAgent(prompt.sender), enabled: fourEyes });
  const answer = useMutation({
    mutationFn: (decision: PermissionDecision) => adminApi.answerToolPrompt(prompt.task_id, prompt.request.request_id, decision, reason.trim()),
    onSuccess: (task, decision) => onAnswered(answeredText(prompt, decision, task)),
    onError: (error) => {
      if (error instanceof ApiError && error.status === 409) onAnswered(`Not answered: ${error.message}`);
    },
    onSettled: () => setAsking(null),
  });

  if (fourEyes && owner.isPending) return <p role="status">Checking who may answer…</p>;
  const cannot = toolPromptRefusal(prompt, { ...decider, person }, owner.data);
  if (cannot) {
    return (
      <p className="notice" role="note" data-testid="tool-prompt-refused">
        {cannot}
      </p>
    );
  }

  const ask = (decision: PermissionDecision) => (event?: FormEvent) => {
    event?.preventDefault();
    setAsking(decision);
  };
  const tool = prompt.request.tool_name;
  const hintId = `${reasonId}-hint`;
  return (
    <form onSubmit={ask('allow')} aria-label={`Answer request ${prompt.request.request_id}`}>
      <div className="field">
        <label htmlFor={reasonId}>Reason</label>
        <textarea
          id={reasonId}
          rows={2}
          maxLength={TOOL_PROMPT_LIMITS.reasonChars}
          value={reason}
          aria-describedby={hintId}
          onChange={(event) => setReason(event.target.value)}
        />
        <p id={hintId} className="hint">
          Optional: the coding agent is told it.
        </p>
      </div>
      <div className="actions">
        <button type="submit" className="button" disabled={answer.isPending}>
          Allow
        </button>
        <button type="button" className="button danger" disabled={answer.isPending} onClick={ask('deny')}>
          Deny
        </button>
      </div>
      {answer.isError && <ErrorMessage error={answer.error} />}
      <ConfirmDialog
        open={asking !== null}
        title={asking === 'deny' ? `Deny ${tool}?` : `Allow ${tool}?`}
        confirmLabel={asking === 'deny' ? 'Deny' : 'Allow'}
        onCancel={() => setAsking(null)}
        onConfirm={() => asking && answer.mutate(asking)}
      >
        {asking === 'deny'
          ? `${prompt.recipient}'s coding agent may not use ${tool} for this call; it is told your reason and goes on without it.`
          : `${prompt.recipient}'s coding agent uses ${tool} with this input at once.`}
      </ConfirmDialog>
    </form>
  );
}
