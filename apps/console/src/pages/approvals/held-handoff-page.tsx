import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { adminApi } from '../../api/admin-api';
import { ApiError } from '../../api/api-error';
import { ErrorMessage } from '../../components/error-message';
import { heldPartiesOf } from '../../lib/hold-view';
import { useDocumentTitle } from '../../lib/use-document-title';
import { AuditTable } from '../handoff/audit-table';
import { HandoffHeader } from '../handoff/handoff-header';
import { TaskArtifacts } from '../handoff/task-artifacts';
import { Timeline } from '../handoff/timeline';
import { DecisionControls } from './decision-controls';
import { HoldFacts } from './hold-facts';

/**
 * One held handoff: everything it would deliver (the proposed action, the artifacts, the messages),
 * its hold, and after all of that the decision, so that reading the page (or tabbing through it)
 * reaches the controls only past what they approve; a link at the top skips to them.
 */
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
  const held = heldPartiesOf(task);
  return (
    <article className="handoff" aria-label={`Held handoff ${task.summary || task.id}`}>
      <p>
        <Link to="/approvals">Back to the approvals</Link> · <Link to={`/handoffs/${encodeURIComponent(task.id)}`}>Open as a handoff</Link>
        {task.state === 'held' && (
          <>
            {' '}
            · <a href="#decision">Skip to the decision</a>
          </>
        )}
      </p>
      <HandoffHeader task={task} />
      {held && <HoldFacts held={held} audit={audit} />}
      <TaskArtifacts artifacts={task.artifacts} />
      <Timeline entries={timeline} truncated={timeline_truncated} held={held} />
      <div id="decision">
        <DecisionControls task={task} />
      </div>
      <AuditTable rows={audit} />
    </article>
  );
}
