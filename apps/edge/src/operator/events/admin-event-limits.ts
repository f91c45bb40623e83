import { Inject, Injectable } from '@nestjs/common';
import { RelayError } from '@app/contracts';
import { EdgeConfig } from '../../edge.config';

/** The Retry-After of a refused stream: a slot frees when one of the open streams closes, which the edge cannot foresee. */
export const ADMIN_EVENT_STREAM_RETRY_AFTER_SECONDS = 5;

interface SessionStreams {
  open: number;
  /** The earliest time (ms) the session's next replay page may be read. */
  nextPageAt: number;
}

/**
 * The bounds of `GET /admin/events` on this edge: open streams per console session (the admin
 * token's callers count as one) and in all, and the pace of replays from an old position, per
 * session and in all. A replay reads a page (ADMIN_TASK_LIMITS: 200 events, 512 KiB) only at its
 * session's turn, then at the edge's: so one session's catch-up, however many streams it opens or
 * reopens, costs the tasks service at most RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND page reads a
 * second, and all of them at most RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND_PER_EDGE. A session's
 * pace outlives its streams until its next turn, so closing and opening again does not skip it.
 */
@Injectable()
export class AdminEventLimits {
  private readonly sessions = new Map<string, SessionStreams>();
  private open = 0;
  private edgeNextPageAt = 0;

  constructor(@Inject(EdgeConfig) private readonly config: EdgeConfig) {}

  /** Open admin event streams on this edge. */
  get openStreams(): number {
    return this.open;
  }

  /** Takes a stream slot of `session` (the admin principal's actor), or throws `rate_limited` (429, Retry-After); the release is idempotent. */
  reserve(session: string, now = Date.now()): () => void {
    this.forgetIdle(now);
    const perSession = this.config.RELAY_ADMIN_EVENT_STREAMS_PER_SESSION;
    const perEdge = this.config.RELAY_ADMIN_EVENT_STREAMS_PER_EDGE;
    const state = this.sessions.get(session) ?? { open: 0, nextPageAt: 0 };
    if (state.open >= perSession) {
      throw refusal(
        `At most ${perSession} admin event streams per console session may be open at once (RELAY_ADMIN_EVENT_STREAMS_PER_SESSION); close one before opening another`,
        perSession,
        'RELAY_ADMIN_EVENT_STREAMS_PER_SESSION',
      );
    }
    if (this.open >= perEdge) {
      throw refusal(
        `At most ${perEdge} admin event streams may be open at once on this edge (RELAY_ADMIN_EVENT_STREAMS_PER_EDGE); retry later`,
        perEdge,
        'RELAY_ADMIN_EVENT_STREAMS_PER_EDGE',
      );
    }
    state.open += 1;
    this.open += 1;
    this.sessions.set(session, state);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.open -= 1;
      this.open -= 1;
    };
  }

  /**
   * Waits for the next replay page of `session`: its own turn, then the edge's. Returns early once
   * `signal` is aborted (the caller checks it).
   */
  async pace(session: string, signal?: AbortSignal): Promise<void> {
    await delay(this.sessionTurn(session, Date.now()) - Date.now(), signal);
    if (signal?.aborted) return;
    await delay(this.edgeTurn(Date.now()) - Date.now(), signal);
  }

  /** Books the session's next page: the time it may be read. */
  sessionTurn(session: string, now: number): number {
    let state = this.sessions.get(session);
    if (!state) {
      state = { open: 0, nextPageAt: 0 };
      this.sessions.set(session, state);
    }
    const at = Math.max(now, state.nextPageAt);
    state.nextPageAt = at + 1000 / this.config.RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND;
    return at;
  }

  /** Books the edge's next page: the time it may be read. */
  edgeTurn(now: number): number {
    const at = Math.max(now, this.edgeNextPageAt);
    this.edgeNextPageAt = at + 1000 / this.config.RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND_PER_EDGE;
    return at;
  }

  /** Sessions without open streams whose pace has run out are forgotten (so the map holds at most the open ones and a turn's worth more). */
  private forgetIdle(now: number): void {
    for (const [session, state] of this.sessions) if (state.open === 0 && state.nextPageAt <= now) this.sessions.delete(session);
  }
}

function refusal(message: string, limit: number, limitName: string): RelayError {
  return new RelayError('rate_limited', message, { limit, limit_name: limitName, retry_after_seconds: ADMIN_EVENT_STREAM_RETRY_AFTER_SECONDS });
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}
