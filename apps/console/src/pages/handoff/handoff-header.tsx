import type { TaskView } from '../../api/types';
import { FileDiff } from '../../components/file-diff';
import { intentLabel } from '../../components/intent-label';
import { StateBadge } from '../../components/state-badge';
import { TimeStamp } from '../../components/time-stamp';

/** Who handed what to whom, where it stands, and the action it proposes. */
export function HandoffHeader({ task }: { task: TaskView }) {
  const action = task.proposed_action;
  return (
    <header className="handoff-header">
      <h1>{task.summary || 'Handoff'}</h1>
      <dl className="facts">
        <div>
          <dt>Sender → recipient</dt>
          <dd>
            {task.sender.handle} ({task.sender.name}) → {task.recipient.handle} ({task.recipient.name})
          </dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>
            <StateBadge state={task.state} />
            {task.reason ? ` — ${task.reason}` : ''}
          </dd>
        </div>
        <div>
          <dt>Intent</dt>
          <dd>{intentLabel(task.intent)}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <TimeStamp at={task.created_at} />
          </dd>
        </div>
        <div>
          <dt>Context</dt>
          <dd>
            <code>{task.context_id}</code>
          </dd>
        </div>
        {task.result_summary && (
          <div>
            <dt>Result</dt>
            <dd>{task.result_summary}</dd>
          </div>
        )}
      </dl>
      {action && (
        <section className="proposed-action" aria-labelledby="proposed-action-title">
          <h2 id="proposed-action-title">Proposed action</h2>
          <p>{action.description}</p>
          {action.rationale && <p>Why: {action.rationale}</p>}
          {action.target_files.length > 0 && (
            <ul aria-label="Target files">
              {action.target_files.map((file) => (
                <li key={file}>
                  <code>{file}</code>
                </li>
              ))}
            </ul>
          )}
          {action.suggested_diff && <FileDiff path={action.target_files[0] ?? 'suggested change'} diff={action.suggested_diff} />}
        </section>
      )}
    </header>
  );
}
