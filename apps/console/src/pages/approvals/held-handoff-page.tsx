import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { adminApi } from '../../api/admin-api';
import { ApiError } from '../../api/api-error';
import type { TaskHold } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { TimeStamp } from '../../components/time-stamp';
import { useDocumentTitle } from '../../lib/use-document-title';
import { AuditTable } from '../handoff/audit-table';
import { HandoffHeader } from '../handoff/handoff-header';
import { TaskArtifacts } from '../handoff/task-artifacts';
import { Timeline } from '../handoff/timeline';
import { DecisionControls } from './decision-controls';

const OUTCOME_LABELS: Record<TaskHold['outcome'], string> = {
  held: 'Waiting for a decision',
  approved: 'Approved',
  denied: 'Denied',
  expired: 'Expired',
  cancelled: 'Withdrawn by the sender',
};

function HoldFacts({ hold }: { hold: TaskHold }) {
  return (
    <section aria-labelledby="hold-title">
      <h2 id="hold-title">Hold</h2>
      <dl className="facts">
        <div>
          <dt>Rule</dt>
          <dd>{hold.rule}</dd>
        </div>
        <div>
          <dt>Why</dt>
          <dd>{hold.reason}</dd>
        </div>
        <div>
          <dt>Four eyes</dt>
          <dd>{hold.four_eyes ? "Yes: the sending agent's owner may not decide" : 'No'}</dd>
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
        {hold.comment && (
          <div>
            <dt>Comment</dt>
            <dd>{hold.comment}</dd>
          </div>
        )}
      </dl>
    </section>
  );
}

/** One held handoff: everything it would deliver (messages, artifacts, the proposed action), its hold, and the decision. */
export function HeldHandoffPage() {
  const { id = '' } = useParams();
  const detail = useQuery({ queryKey: ['approval', id], queryFn: () => adminApi.getApproval(id) });
  useDocumentTitle(detail.data ? `Held handoff: ${detail.data.task.summary || id}` : 'Held handoff');

  if (detail.isPending) return <p role="status">Loading the held handoff…</p>;
  if (detail.isError) {
    const missing = detail.error instanceof ApiError && (detail.error.status === 404 || detail.error.status === 409);
    return (
      <>
        <h1>{missing ? 'Held handoff not found' : 'Held handoff'}</h1>
        <ErrorMessage error={detail.error} />
        <p>
          <Link to="/approvals">Back to the approvals</Link>
        </p>
      </>
    );
  }
  const { task, timeline, timeline_truncated, audit } = detail.data;
  return (
    <article className="handoff" aria-label={`Held handoff ${task.summary || task.id}`}>
      <p>
        <Link to="/approvals">Back to the approvals</Link> · <Link to={`/handoffs/${encodeURIComponent(task.id)}`}>Open as a handoff</Link>
      </p>
      <HandoffHeader task={task} />
      {task.hold && <HoldFacts hold={task.hold} />}
      <DecisionControls task={task} />
      <TaskArtifacts artifacts={task.artifacts} />
      <Timeline entries={timeline} truncated={timeline_truncated} />
      <AuditTable rows={audit} />
    </article>
  );
}
