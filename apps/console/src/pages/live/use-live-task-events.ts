import { useEffect, useRef, useState } from 'react';
import type { LiveTaskEvent } from '../../api/types';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'closed';

/**
 * Follows `GET /admin/events` (same origin, the session cookie). EventSource reconnects by itself
 * and sends the last event id, so the relay replays what was missed.
 */
export function useLiveTaskEvents(onEvent: (event: LiveTaskEvent) => void): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>('connecting');
  const handler = useRef(onEvent);
  useEffect(() => {
    handler.current = onEvent;
  }, [onEvent]);

  useEffect(() => {
    const source = new EventSource('/admin/events');
    source.addEventListener('open', () => setStatus('live'));
    source.addEventListener('error', () => setStatus(source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting'));
    source.addEventListener('task', (message: MessageEvent<string>) => {
      try {
        handler.current(JSON.parse(message.data) as LiveTaskEvent);
      } catch {
        // A malformed event is skipped; the next read of the page shows the truth.
      }
    });
    return () => source.close();
  }, []);
  return status;
}
