import type { AuditRow, TaskHold } from '../../api/types';
import { TimeStamp } from '../../components/time-stamp';
import { heldByText, holdDecider, whoMayDecideText, type HeldParties } from '../../lib/hold-view';

const OUTCOME_LABELS: Record<TaskHold['outcome'], string> = {
  held: 'Waiting for a decision',
  approved: 'Approved',
  denied: 'Denied',
  expired: 'Expired',
  cancelled: 'Withdrawn by the sender',
};

/** A held (or once held) handoff's hold: who held it under which rule, who may decide, and who decided, when and with what comment. */
export function HoldFacts({ held, audit }: { held: HeldParties; audit: AuditRow[] }) {
  const { hold } = held;
  const decider = holdDecider(audit);
  return (
    <section aria-labelledby="hold-title">
      <h2 id="hold-title">Hold</h2>
      <dl className="facts">
        <div>
          <dt>Held by</dt>
          <dd data-testid="hold-held-by">{heldByText(held)}</dd>
        </div>
        <div>
          <dt>Rule</dt>
          <dd>{hold.rule}</dd>
        </div>
        <div>
          <dt>Why</dt>
          <dd>{hold.reason}</dd>
        </div>
        <div>
          <dt>Who may decide</dt>
          <dd>{whoMayDecideText(held)}</dd>
        </div>
        <div>
          <dt>Expires</dt>
          <dd>
            <TimeStamp at={hold.expires_at} />
          </dd>
        </div>
        <div>
          <dt>Outcome</dt>
          <dd data-testid="hold-outcome">
            {OUTCOME_LABELS[hold.outcome]}
            {hold.decided_at ? (
              <>
                {' '}
                at <TimeStamp at={hold.decided_at} />
              </>
            ) : null}
          </dd>
        </div>
        {decider && hold.outcome !== 'held' && (
          <div>
            <dt>Decided by</dt>
            <dd data-testid="hold-decided-by">{decider}</dd>
          </div>
        )}
        {hold.comment && (
          <div>
            <dt>Comment</dt>
            <dd data-testid="hold-comment">{hold.comment}</dd>
          </div>
        )}
      </dl>
    </section>
  );
}
