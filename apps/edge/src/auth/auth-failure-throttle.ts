import { Inject, Injectable, Optional } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { RelayError } from '@app/contracts';
import { EdgeConfig } from '../edge.config';
import { FailureWindows, RecentlyAccepted } from './failure-windows';
import { KeyFilter } from './key-filter';

/** Digests of credentials accepted on this edge, kept (least recently used first out) to let their owners pass a throttled address. */
const MAX_ACCEPTED = 100_000;

/**
 * Throttles failed authentications (agent keys and the admin token), never successful ones.
 * Failures are counted in this edge process, each in a fixed window of
 * `RELAY_AUTH_FAILURE_WINDOW_MS`, per client address and per presented secret (by its SHA-256
 * digest: never by a public part of it, so nobody can spend someone else's budget).
 *
 * The order callers follow:
 * 1. Check what is checkable without I/O first (the admin token, the shape of an agent key): a
 *    valid credential is accepted whatever the failures of its address.
 * 2. Before asking the directory, `assertAllowed`: a secret past its own budget is answered 429
 *    without a lookup. So is any secret from an address past its budget, unless it could be valid:
 *    the key filter lists it as a live agent key (see KeyFilter), or this edge has accepted it
 *    before (`recordSuccess`) and not refused it since. Such a key is still checked by the directory
 *    (through its ≤ 1 s cache), so a revoked key stays refused and loses its pass. Someone else's
 *    failures never refuse a valid key; while the filter is not loaded, only keys accepted before
 *    pass a throttled address.
 *    A bearer JWT of a configured issuer is not a guess: it is proven by its signature, so
 *    `assertSecretAllowed` checks only its own budget and a new token (short-lived tokens always
 *    are) is verified from a throttled address too; refused, it is counted like a bad key.
 * 3. `recordFailure` after a refusal, `recordSuccess` after an acceptance.
 * A success never clears the failures of its address, so one valid key cannot buy more guesses.
 */
@Injectable()
export class AuthFailureThrottle {
  private readonly windows: FailureWindows;
  private readonly accepted = new RecentlyAccepted(MAX_ACCEPTED);

  constructor(
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Optional() @Inject(KeyFilter) private readonly keyFilter?: Pick<KeyFilter, 'verdict'>,
  ) {
    this.windows = new FailureWindows(config.RELAY_AUTH_FAILURES_PER_WINDOW, config.RELAY_AUTH_FAILURE_WINDOW_MS);
  }

  /**
   * Throws `rate_limited` (429, Retry-After) while the presented secret is past its failure budget,
   * or while its address is and the secret neither is listed by the key filter nor was accepted on
   * this edge before.
   */
  assertAllowed(address: string, credential: string | undefined, now = Date.now()): void {
    const secretKey = credential === undefined ? undefined : secretKeyOf(credential);
    if (secretKey !== undefined && this.accepted.has(secretKey)) return;
    const secretBlockedFor = secretKey === undefined ? 0 : this.windows.blockedFor(secretKey, now);
    const addressBlockedFor = this.windows.blockedFor(addressKey(address), now);
    if (secretBlockedFor <= 0 && addressBlockedFor <= 0) return;
    if (secretBlockedFor <= 0 && credential !== undefined && this.keyFilter?.verdict(credential) === 'listed') return;
    throw this.refusal(Math.max(secretBlockedFor, addressBlockedFor));
  }

  /**
   * Throws `rate_limited` only while the presented secret itself is past its failure budget, whatever
   * its address's failures: for a credential whose validity is proven by a signature (a bearer JWT
   * of a configured issuer), which guessing cannot produce.
   */
  assertSecretAllowed(credential: string, now = Date.now()): void {
    const secretKey = secretKeyOf(credential);
    if (this.accepted.has(secretKey)) return;
    const blockedFor = this.windows.blockedFor(secretKey, now);
    if (blockedFor > 0) throw this.refusal(blockedFor);
  }

  private refusal(blockedFor: number): RelayError {
    const retryAfterSeconds = Math.max(1, Math.ceil(blockedFor / 1000));
    return new RelayError(
      'rate_limited',
      `Too many failed authentication attempts (limit ${this.config.RELAY_AUTH_FAILURES_PER_WINDOW} per ${this.config.RELAY_AUTH_FAILURE_WINDOW_MS} ms); retry after ${retryAfterSeconds} s`,
      { limit: this.config.RELAY_AUTH_FAILURES_PER_WINDOW, limit_name: 'RELAY_AUTH_FAILURES_PER_WINDOW', retry_after_seconds: retryAfterSeconds },
    );
  }

  /** A refused credential: counted for its address and itself; a key accepted before (now revoked) loses its pass. */
  recordFailure(address: string, credential: string | undefined, now = Date.now()): void {
    this.windows.count(addressKey(address), now);
    if (credential === undefined) return;
    const secretKey = secretKeyOf(credential);
    this.accepted.delete(secretKey);
    this.windows.count(secretKey, now);
  }

  /** A key or token that was accepted: from now on a throttled address does not stop it before its check. */
  recordSuccess(credential: string): void {
    const secretKey = secretKeyOf(credential);
    this.windows.clear(secretKey);
    this.accepted.add(secretKey);
  }
}

function addressKey(address: string): string {
  return `address:${address}`;
}

function secretKeyOf(credential: string): string {
  return `secret:${createHash('sha256').update(credential, 'utf8').digest('base64')}`;
}
