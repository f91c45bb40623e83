import type { TimelineEntry } from '../../api/types';
import { stateLabel } from '../../components/state-badge';
import { TimeStamp } from '../../components/time-stamp';
import { ArtifactContent } from './artifact-view';
import { PartsView } from './parts-view';

const EVENT_LABELS: Record<string, string> = {
  held: 'Held for approval',
  created: 'Created',
  message_appended: 'Message',
  accepted: 'Accepted',
  input_required: 'Input requested',
  completed: 'Completed',
  failed: 'Failed',
  rejected: 'Rejected',
  canceled: 'Cancelled',
  cancelled: 'Cancelled',
  artifact_updated: 'Artifact',
  progress: 'Progress',
};

export function eventLabel(event: string): string {
  return EVENT_LABELS[event] ?? event.replace(/_/g, ' ');
}

function EntryBody({ entry }: { entry: TimelineEntry }) {
  return (
    <>
      {entry.message && (
        <div className="message">
          <PartsView parts={entry.message.parts} />
        </div>
      )}
      {entry.artifact && (
        <div className="artifact-entry">
          {entry.artifact.name && <p className="artifact-name">{entry.artifact.name}</p>}
          <ArtifactContent artifact={entry.artifact} />
        </div>
      )}
      {entry.reason && <p className="reason">Reason: {entry.reason}</p>}
    </>
  );
}

/** Every event of the task, oldest first, each with its time and who did it. */
export function Timeline({ entries, truncated }: { entries: TimelineEntry[]; truncated: boolean }) {
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      {truncated && <p className="hint">The task has more events than one page shows: these are its first {entries.length}.</p>}
      <ol className="timeline" aria-label="Events, oldest first">
        {entries.map((entry) => (
          <li key={entry.position} className={`timeline-entry event-${entry.event}`}>
            <article aria-label={`${eventLabel(entry.event)} by ${entry.actor ?? 'the relay'}`}>
              <header className="timeline-meta">
                <strong>{eventLabel(entry.event)}</strong> <span>by {entry.actor ?? 'the relay'}</span> · <TimeStamp at={entry.at} /> ·{' '}
                <span>state {stateLabel(entry.state)}</span>
              </header>
              <EntryBody entry={entry} />
            </article>
          </li>
        ))}
      </ol>
    </section>
  );
}
