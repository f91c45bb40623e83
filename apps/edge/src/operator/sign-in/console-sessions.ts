import { Inject, Injectable } from '@nestjs/common';
import { DiscardPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { normalizeGrants, prefixedSubject, RelayError, type RoleGrant } from '@app/contracts';
import { CONSOLE_SESSION_SUBJECT_ROOT, consoleSessionStreamName, matchMaxBytes, matchReplicas, NatsRpcClient } from '@app/messaging';
import type { AdminRole } from '../admin-roles';
import { EdgeConfig } from '../../edge.config';

/** The cookie that carries a console session: 32 random bytes, base64url. */
export const SESSION_COOKIE = 'relay_session';
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;
const STORE_TIMEOUT_MS = 2000;

/** The person an OIDC sign-in names, from their ID token: the audit names them by `sub` and email; four eyes by account and verified email. */
export interface ConsolePerson {
  issuer: string;
  sub: string;
  email: string | null;
  /** Whether the provider said it verified `email` (`email_verified: true`); false when it said nothing. */
  email_verified: boolean;
  name: string | null;
}

/** A console session as the API shows it: `session` is its short public id, named in the admin audit. */
export interface ConsoleSessionView {
  session: string;
  csrf_token: string;
  expires_at: string;
  /** The strongest of its roles (a sign-in with the admin token is `admin`). */
  role: AdminRole;
  /** Its roles: relay-wide (`org: null`) or each in one org (docs/orgs.md#scoped-roles). */
  grants: RoleGrant[];
  /** Who signed in through OIDC; null for a sign-in with the admin token. */
  person: ConsolePerson | null;
}

/** Who a new session is for: the admin token's holder, or a person with their role. */
export type SessionHolder = { role: 'admin'; person: null } | { role: AdminRole; grants: RoleGrant[]; person: ConsolePerson };

interface StoredSession {
  session: string;
  /** The cookie value's digest (also the subject it is stored under), compared again on every read. */
  cookie_digest: string;
  expires_at: string;
  /** Absent on sessions stored before roles: those were all made with the admin token. */
  role?: AdminRole;
  /** Absent on sessions stored before orgs: their role is relay-wide. */
  grants?: RoleGrant[];
  person?: ConsolePerson | null;
}

function cookieDigest(cookie: string): string {
  return createHash('sha256').update(cookie, 'utf8').digest('hex');
}

/** The session's CSRF token: derived from the cookie, so only a holder of the cookie can know it, and never stored. */
function csrfTokenOf(cookie: string): string {
  return createHmac('sha256', cookie).update('agentrelay console csrf token').digest('base64url');
}

function sameText(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right);
}

/**
 * Console sessions, shared by every edge replica: one JetStream message per session (file storage,
 * one message per subject, the subject named after the digest of the cookie, never the cookie
 * itself), expired by the stream's `max_age` and by the stored `expires_at`, deleted at sign-out.
 */
@Injectable()
export class ConsoleSessions {
  private store?: Promise<{ js: JetStreamClient; jsm: JetStreamManager }>;

  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
  ) {}

  /** A new session: the cookie value to set (shown only in Set-Cookie) and the session's view. */
  async create(holder: SessionHolder = { role: 'admin', person: null }, now = Date.now()): Promise<{ cookie: string; view: ConsoleSessionView }> {
    const cookie = randomBytes(32).toString('base64url');
    const stored: StoredSession = {
      session: randomBytes(6).toString('hex'),
      cookie_digest: cookieDigest(cookie),
      expires_at: new Date(now + this.config.RELAY_CONSOLE_SESSION_TTL_MS).toISOString(),
      role: holder.role,
      grants: 'grants' in holder ? holder.grants : [{ org: null, role: holder.role }],
      person: holder.person,
    };
    const { js } = await this.connect();
    await this.reachStore(() => js.publish(this.subjectOf(stored.cookie_digest), JSON.stringify(stored), { timeout: STORE_TIMEOUT_MS }));
    return { cookie, view: this.viewOf(cookie, stored) };
  }

  /** The live session of a cookie value, or undefined (unknown, expired, signed out or malformed). */
  async find(cookie: string, now = Date.now()): Promise<ConsoleSessionView | undefined> {
    if (!COOKIE_VALUE.test(cookie)) return undefined;
    const digest = cookieDigest(cookie);
    const { jsm } = await this.connect();
    const message = await this.reachStore(() => jsm.streams.getMessage(this.streamName, { last_by_subj: this.subjectOf(digest) }));
    if (!message) return undefined;
    let stored: StoredSession;
    try {
      stored = message.json<StoredSession>();
    } catch {
      return undefined;
    }
    if (typeof stored.cookie_digest !== 'string' || !sameText(stored.cookie_digest, digest)) return undefined;
    if (!(Date.parse(stored.expires_at) > now)) return undefined;
    return this.viewOf(cookie, stored);
  }

  /** Whether `presented` is the CSRF token of the session of `cookie` (constant time). */
  csrfMatches(cookie: string, presented: string | undefined): boolean {
    return presented !== undefined && sameText(csrfTokenOf(cookie), presented);
  }

  /** Signs the session out on every edge: its message is purged from the store. */
  async delete(cookie: string): Promise<void> {
    if (!COOKIE_VALUE.test(cookie)) return;
    const { jsm } = await this.connect();
    await this.reachStore(() => jsm.streams.purge(this.streamName, { filter: this.subjectOf(cookieDigest(cookie)) }));
  }

  private viewOf(cookie: string, stored: StoredSession): ConsoleSessionView {
    return {
      session: stored.session,
      csrf_token: csrfTokenOf(cookie),
      expires_at: stored.expires_at,
      role: stored.role ?? 'admin',
      grants: normalizeGrants(stored.grants ?? [{ org: null, role: stored.role ?? 'admin' }]),
      // Sessions stored before `email_verified` was read have it unverified.
      person: stored.person ? { ...stored.person, email_verified: stored.person.email_verified === true } : null,
    };
  }

  private get streamName(): string {
    return consoleSessionStreamName(this.nats.subjectPrefix);
  }

  private subjectOf(digest: string): string {
    return prefixedSubject(this.nats.subjectPrefix, `${CONSOLE_SESSION_SUBJECT_ROOT}.${digest}`);
  }

  /** A store that cannot be reached is the relay being unavailable (503), never a wrong sign-in. */
  private async reachStore<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      this.store = undefined;
      throw new RelayError('service_unavailable', 'The console session store (JetStream) does not answer; retry shortly', {
        dependency: 'jetstream',
        cause: error instanceof Error ? error.message : String(error),
      });
    }
  }

  private connect(): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
    this.store ??= this.reachStore(() => this.ensureStream()).catch((error: unknown) => {
      this.store = undefined;
      throw error;
    });
    return this.store;
  }

  private async ensureStream(): Promise<{ js: JetStreamClient; jsm: JetStreamManager }> {
    const jsm = await jetstreamManager(this.nats.connection, { timeout: STORE_TIMEOUT_MS });
    const name = this.streamName;
    const existing = await jsm.streams.info(name).catch(() => undefined);
    const maxAge = nanos(this.config.RELAY_CONSOLE_SESSION_TTL_MS);
    if (!existing) {
      await jsm.streams
        .add({
          name,
          subjects: [prefixedSubject(this.nats.subjectPrefix, `${CONSOLE_SESSION_SUBJECT_ROOT}.>`)],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          discard: DiscardPolicy.Old,
          max_msgs_per_subject: 1,
          max_age: maxAge,
          max_bytes: this.config.RELAY_STATE_STREAM_MAX_BYTES,
          num_replicas: this.config.RELAY_JETSTREAM_REPLICAS,
        })
        .catch(async (error: unknown) => {
          if (!(await jsm.streams.info(name).catch(() => undefined))) throw error;
        });
    } else {
      // A longer TTL configured since the stream was made: sessions must outlive it.
      const current = existing.config.max_age < maxAge ? await jsm.streams.update(name, { max_age: maxAge }) : existing;
      await matchReplicas(jsm, await matchMaxBytes(jsm, current, this.config.RELAY_STATE_STREAM_MAX_BYTES), this.config.RELAY_JETSTREAM_REPLICAS);
    }
    return { js: jetstream(this.nats.connection, { timeout: STORE_TIMEOUT_MS }), jsm };
  }
}
