import { useId, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../../api/admin-api';
import type { ApprovalDecision, TaskView } from '../../api/types';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';
import { decisionRefusal } from '../../lib/decision-refusal';
import { roleAllows } from '../../lib/roles';
import { useRole, useSession } from '../../session/session-context';

/** The relay's limit on a decision's comment (APPROVAL_LIMITS.commentChars). */
const COMMENT_CHARS = 2000;

/** Approve or deny, with a comment (a deny's reason is required: the sender is told it), each after a confirmation. */
export function DecisionControls({ task }: { task: TaskView }) {
  const { deciderFor } = useRole();
  // The recipient's org decides: its trust policy's rule held the handoff.
  const decider = deciderFor(task.recipient.handle);
  const { state } = useSession();
  const person = state.status === 'signed_in' ? state.session.person : null;
  const queryClient = useQueryClient();
  const commentId = useId();
  const [comment, setComment] = useState('');
  const [missingReason, setMissingReason] = useState(false);
  const [asking, setAsking] = useState<ApprovalDecision | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const fourEyes = task.hold?.four_eyes === true && decider.role !== null && roleAllows(decider.role, 'approver') && person !== null;
  const owner = useQuery({ queryKey: ['agent', task.sender.handle], queryFn: () => adminApi.getAgent(task.sender.handle), enabled: fourEyes });
  const decide = useMutation({
    mutationFn: (decision: ApprovalDecision) => adminApi.decideApproval(task.id, decision, comment.trim()),
    onSuccess: (decided, decision) => {
      setDone(
        decision === 'approve'
          ? `Approved: delivered to ${decided.recipient.handle} as if just sent.`
          : `Denied: ${decided.sender.handle} is told "${decided.reason ?? 'Denied by an approver'}".`,
      );
      void queryClient.invalidateQueries({ queryKey: ['approvals'] });
      void queryClient.invalidateQueries({ queryKey: ['approval', task.id] });
      void queryClient.invalidateQueries({ queryKey: ['task', task.id] });
    },
    onSettled: () => setAsking(null),
  });

  if (done) {
    return (
      <p role="status" className="notice" data-testid="decision-result">
        {done}
      </p>
    );
  }
  if (task.state !== 'held') return null;
  if (fourEyes && owner.isPending) return <p role="status">Checking who may decide…</p>;
  const cannot = decisionRefusal(task, { ...decider, person }, owner.data);
  if (cannot) {
    return (
      <p className="notice" role="note" data-testid="decision-refused">
        {cannot}
      </p>
    );
  }

  const ask = (decision: ApprovalDecision) => (event?: FormEvent) => {
    event?.preventDefault();
    if (decision === 'deny' && comment.trim() === '') {
      setMissingReason(true);
      return;
    }
    setMissingReason(false);
    setAsking(decision);
  };
  const hintId = `${commentId}-hint`;
  const errorId = `${commentId}-error`;
  return (
    <section aria-labelledby="decision-title" className="card">
      <h2 id="decision-title">Decide</h2>
      <form onSubmit={ask('approve')}>
        <div className="field">
          <label htmlFor={commentId}>Comment</label>
          <textarea
            id={commentId}
            rows={3}
            maxLength={COMMENT_CHARS}
            value={comment}
            aria-describedby={missingReason ? `${hintId} ${errorId}` : hintId}
            aria-invalid={missingReason}
            onChange={(event) => setComment(event.target.value)}
          />
          <p id={hintId} className="hint">
            Optional to approve. Required to deny: the sender is told it as the reason.
          </p>
          {missingReason && (
            <p id={errorId} role="alert" className="error">
              Give a reason to deny this handoff.
            </p>
          )}
        </div>
        <div className="actions">
          <button type="submit" className="button" disabled={decide.isPending}>
            Approve
          </button>
          <button type="button" className="button danger" disabled={decide.isPending} onClick={ask('deny')}>
            Deny
          </button>
        </div>
      </form>
      {decide.isError && <ErrorMessage error={decide.error} />}
      <ConfirmDialog
        open={asking !== null}
        title={asking === 'deny' ? 'Deny this handoff?' : 'Approve this handoff?'}
        confirmLabel={asking === 'deny' ? 'Deny' : 'Approve'}
        onCancel={() => setAsking(null)}
        onConfirm={() => asking && decide.mutate(asking)}
      >
        {asking === 'deny'
          ? `${task.sender.handle} is told it was denied, with your reason; ${task.recipient.handle} never sees it.`
          : `It is delivered to ${task.recipient.handle} at once, as if just sent.`}
      </ConfirmDialog>
    </section>
  );
}
