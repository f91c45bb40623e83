import type { TimelineEntry, UpstreamCallView } from '../../api/types';
import { stateLabel } from '../../components/state-badge';
import { TimeStamp } from '../../components/time-stamp';
import { actorText, holdNotes, type HeldParties, type HoldNote } from '../../lib/hold-view';
import { mergeTimeline } from '../../lib/upstream-view';
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

function EntryBody({ entry, note }: { entry: TimelineEntry; note: HoldNote | undefined }) {
  return (
    <>
      {note && (
        <div className="hold-note">
          {note.lines.map((line) => (
            <p key={line}>{line}</p>
          ))}
        </div>
      )}
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

const OUTCOME_LABELS: Record<string, string> = {
  ok: 'ok',
  refused: 'refused by the SSRF guard',
  timeout: 'timed out',
  tls: 'TLS refused',
  connection: 'connection failed',
  unauthorized: 'unauthorized',
  http_4xx: 'HTTP 4xx',
  http_5xx: 'HTTP 5xx',
  a2a_error: 'A2A error',
  too_large: 'answer too large',
};

function UpstreamCallEntry({ call }: { call: UpstreamCallView }) {
  return (
    <article aria-label={`Upstream call ${call.method} to ${call.handle}: ${OUTCOME_LABELS[call.outcome] ?? call.outcome}`}>
      <header className="timeline-meta">
        <strong>Upstream call {call.method}</strong> <span>to {call.handle}</span> · <TimeStamp at={call.at} /> ·{' '}
        <span className={`call-outcome outcome-${call.outcome}`}>{OUTCOME_LABELS[call.outcome] ?? call.outcome}</span> ·{' '}
        <span>{call.status_code === null ? 'no answer' : `HTTP ${call.status_code}`}</span> · <span>{call.duration_ms} ms</span>
      </header>
      {call.error && <p className="reason">Error: {call.error}</p>}
    </article>
  );
}

function EventEntry({ entry, note }: { entry: TimelineEntry; note: HoldNote | undefined }) {
  const title = note?.title ?? eventLabel(entry.event);
  const by = note?.by ?? actorText(entry.actor);
  return (
    <article aria-label={`${title} by ${by}`}>
      <header className="timeline-meta">
        <strong>{title}</strong> <span>by {by}</span> · <TimeStamp at={entry.at} /> · <span>state {stateLabel(entry.state)}</span>
      </header>
      <EntryBody entry={entry} note={note} />
    </article>
  );
}

/**
 * Every event of the task, oldest first, each with its time and who did it; the requests the relay
 * made to an upstream agent's server for it are merged in by time. For a handoff that was held,
 * `held` says under whose rule the relay held it and who may decide, and the hold's end who decided it.
 */
export function Timeline({
  entries,
  truncated,
  calls = [],
  held = null,
}: {
  entries: TimelineEntry[];
  truncated: boolean;
  calls?: UpstreamCallView[];
  held?: HeldParties | null;
}) {
  const notes = holdNotes(entries, held);
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      {truncated && <p className="hint">The task has more events than one page shows: these are its first {entries.length}.</p>}
      {calls.length > 0 && <p className="hint">With the {calls.length} requests the relay made to the recipient&apos;s A2A server, by time.</p>}
      <ol className="timeline" aria-label="Events, oldest first">
        {mergeTimeline(entries, calls).map((item, index) =>
          item.kind === 'event' ? (
            <li key={item.entry.position} className={`timeline-entry event-${item.entry.event}`}>
              <EventEntry entry={item.entry} note={notes.get(item.entry.position)} />
            </li>
          ) : (
            <li key={`call-${index}`} className="timeline-entry upstream-call" data-testid="upstream-call">
              <UpstreamCallEntry call={item.call} />
            </li>
          ),
        )}
      </ol>
    </section>
  );
}
