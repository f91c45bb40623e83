import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { createHash } from 'node:crypto';
import { API_KEY_PATTERN, type RelayError } from '@app/contracts';
import { extractApiKey, type RequestHeaders } from '../auth/agent-authenticator';
import { DirectoryLookups } from '../directory/directory-lookups';

/** A refusal a caller gets for every call until its window ends. */
export interface KnownRefusal {
  until: number;
  /** The `x-ratelimit-limit` the refusal carries (the agent's own limit). */
  rateLimitLimit: number;
  /** The error for a call refused `retryAfterSeconds` before the window ends (counted where the gate counts it). */
  refuse: (retryAfterSeconds: number) => RelayError;
}

/** Enough for every agent of a large relay at its limit at once; the oldest are dropped past it. */
const MAX_CALLERS = 10_000;
/** A key at its limit gets at most one refusal this often; its other calls wait for their turn. */
export const REFUSAL_INTERVAL_MS = 100;
/** The calls of one key that may wait for their refusal; past them, refusals are answered at once. */
export const MAX_WAITING_REFUSALS = 16;

interface Entry extends KnownRefusal {
  nextAnswerAt: number;
  waiting: number;
}

/** A call refused before it is read: answer it after `delayMs` with `refuse()`. */
export interface EarlyRefusal {
  delayMs: number;
  rateLimitLimit: number;
  /** The error as of when it is answered (the gate's metric counts it); call it once. */
  refuse: () => RelayError;
}

function credentialDigest(headers: RequestHeaders): string | undefined {
  let key: string | undefined;
  try {
    key = extractApiKey(headers);
  } catch {
    return undefined;
  }
  return key !== undefined && API_KEY_PATTERN.test(key) ? createHash('sha256').update(key).digest('base64') : undefined;
}

/**
 * API keys whose calls this edge refuses until the end of a rate-limit window (the agent's own
 * limit or its org's `requests_per_minute`), by the key's digest. A caller at its limit gets its
 * refusal before its call is parsed, authenticated or looked up, so a tenant calling past its limit
 * costs the edge as little as an answer can. Only the gate's own refusals go in, each until the end
 * of the window it refused in, and every entry goes when the directory announces a change (a
 * revoked key, a changed quota), so the answer is the one the whole path would give. Bearer
 * tokens take the whole path.
 *
 * The refusals of one key are paced: one every REFUSAL_INTERVAL_MS, the key's other calls waiting
 * their turn (up to MAX_WAITING_REFUSALS of them, and never past the window's end). Answering costs
 * the edge a write however early it comes, so a client that calls in a loop past its Retry-After
 * takes one answer's worth of the edge per interval and key, whatever its rate.
 */
@Injectable()
export class CallersAtLimit {
  private readonly refusals = new Map<string, Entry>();

  constructor(@Inject(DirectoryLookups) lookups: DirectoryLookups) {
    lookups.onForget(() => this.refusals.clear());
  }

  remember(headers: RequestHeaders, refusal: KnownRefusal): void {
    const digest = credentialDigest(headers);
    if (digest === undefined) return;
    this.refusals.delete(digest);
    this.refusals.set(digest, { ...refusal, nextAnswerAt: 0, waiting: 0 });
    if (this.refusals.size > MAX_CALLERS) this.refusals.delete(this.refusals.keys().next().value as string);
  }

  /** Whether the call's key is known to be at its limit (nothing else is read of the call). */
  knows(headers: RequestHeaders, now = Date.now()): boolean {
    if (this.refusals.size === 0) return false;
    const digest = credentialDigest(headers);
    return digest !== undefined && (this.refusals.get(digest)?.until ?? 0) > now;
  }

  /** The refusal the call's key gets, and when, if the key is known to be at its limit. */
  refusalFor(headers: RequestHeaders, now = Date.now()): EarlyRefusal | undefined {
    if (this.refusals.size === 0) return undefined;
    const digest = credentialDigest(headers);
    const known = digest === undefined ? undefined : this.refusals.get(digest);
    if (known === undefined) return undefined;
    if (known.until <= now) {
      this.refusals.delete(digest!);
      return undefined;
    }
    const answerAt = Math.max(now, known.nextAnswerAt);
    const paced = known.waiting < MAX_WAITING_REFUSALS && answerAt < known.until;
    const delayMs = paced ? answerAt - now : 0;
    if (paced) known.nextAnswerAt = answerAt + REFUSAL_INTERVAL_MS;
    if (delayMs > 0) known.waiting += 1;
    return {
      delayMs,
      rateLimitLimit: known.rateLimitLimit,
      refuse: () => {
        if (delayMs > 0) known.waiting -= 1;
        return known.refuse(Math.max(1, Math.ceil((known.until - Date.now()) / 1000)));
      },
    };
  }

  get size(): number {
    return this.refusals.size;
  }
}

/**
 * Waits for a known refusal's turn and returns its error, with the gate's `x-ratelimit-limit` set on
 * the reply (the binding sets the error's own headers); undefined when the client left meanwhile.
 */
export async function refusalInTurn(known: EarlyRefusal, reply: FastifyReply): Promise<RelayError | undefined> {
  if (known.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, known.delayMs));
  const error = known.refuse();
  if (reply.raw.destroyed) return undefined;
  reply.header('x-ratelimit-limit', String(known.rateLimitLimit));
  return error;
}
