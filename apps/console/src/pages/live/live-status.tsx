import type { LiveStatus } from './use-live-task-events';

const WORDS: Record<LiveStatus, string> = {
  connecting: 'Connecting to live updates…',
  live: 'Live: new handoffs and changes appear as they happen',
  reconnecting: 'Live updates interrupted; reconnecting…',
  closed: 'Live updates stopped; reload the page to resume',
};

export function LiveStatusLine({ status }: { status: LiveStatus }) {
  return (
    <p role="status" className={`live-status live-${status}`}>
      {WORDS[status]}
    </p>
  );
}
