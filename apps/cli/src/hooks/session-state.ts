import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TaskState } from '@app/relay-client';
import type { HookClient } from './hook-input';

/** What one session was last told about one handoff. */
export interface SeenHandoff {
  state: TaskState;
  unread: number;
  /** The handoff's `updated_at` then. */
  updated_at: string;
}

/** What one coding-agent session has been told, kept between its hook runs. */
export interface SessionState {
  version: 1;
  client: HookClient;
  /** `tasks/list` `filter.since` for the next look (the relay's clock); null before a first look. */
  since: string | null;
  seen: Record<string, SeenHandoff>;
}

/** Session files untouched for this long are removed when a new session starts. */
export const SESSION_STATE_MAX_AGE_MS = 14 * 24 * 60 * 60 * 1000;
/** The most handoffs a session remembers (the least recently updated are forgotten first). */
export const SEEN_HANDOFFS_MAX = 1000;

/** `$XDG_STATE_HOME/agentrelay/sessions`, else `~/.local/state/agentrelay/sessions`. */
export function sessionStateDir(env: Record<string, string | undefined>): string {
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'agentrelay', 'sessions');
}

/**
 * The per-session files. A file is named after the session id and a digest of the relay, the
 * agent's key and the session id, so two agents (or relays) never share one; the key itself is
 * never written.
 */
export class SessionStateStore {
  constructor(private readonly dir: string) {}

  fileFor(relayUrl: string, apiKey: string, sessionId: string): string {
    const digest = createHash('sha256').update(`${relayUrl}\n${apiKey}\n${sessionId}`).digest('hex').slice(0, 16);
    const readable = sessionId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
    return join(this.dir, `${readable}-${digest}.json`);
  }

  /** The session's state, or null when it has none yet (or the file is unreadable). */
  async read(file: string): Promise<SessionState | null> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return null;
    }
    try {
      const state = JSON.parse(text) as SessionState;
      return state.version === 1 && typeof state.seen === 'object' && state.seen !== null ? state : null;
    } catch {
      return null;
    }
  }

  /** Writes the state atomically (a temporary file renamed over the old one), private to the user. */
  async write(file: string, state: SessionState): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(temporary, `${JSON.stringify(boundSeen(state))}\n`, { mode: 0o600 });
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  /** Removes session files (and stray temporary files) older than `maxAgeMs`. */
  async prune(now: number, maxAgeMs = SESSION_STATE_MAX_AGE_MS): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.endsWith('.json') && !name.endsWith('.tmp')) continue;
      const path = join(this.dir, name);
      try {
        if (now - (await stat(path)).mtimeMs > maxAgeMs) await rm(path, { force: true });
      } catch {
        // Another session pruned or rewrote it meanwhile.
      }
    }
  }
}

function boundSeen(state: SessionState): SessionState {
  const entries = Object.entries(state.seen);
  if (entries.length <= SEEN_HANDOFFS_MAX) return state;
  entries.sort(([, a], [, b]) => b.updated_at.localeCompare(a.updated_at));
  return { ...state, seen: Object.fromEntries(entries.slice(0, SEEN_HANDOFFS_MAX)) };
}
