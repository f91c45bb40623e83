import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { RelayError } from '@app/contracts';
import { EdgeConfig } from '../edge.config';

/** How much of a presented key or token identifies it for the throttle: never the whole secret. */
export const CREDENTIAL_PREFIX_CHARS = 16;

/** Past this many tracked addresses and prefixes, expired windows are swept before adding another. */
const SWEEP_THRESHOLD = 10_000;

interface FailureWindow {
  failures: number;
  endsAt: number;
}

/**
 * Counts failed authentications (agent keys and the admin token) per client address and per
 * credential prefix in this edge process, each in a fixed window. Once either has reached
 * `RELAY_AUTH_FAILURES_PER_WINDOW`, the caller is answered 429 with `Retry-After` before its
 * credential is checked, until the window ends. Replicas of the edge count separately.
 */
@Injectable()
export class AuthFailureThrottle {
  private readonly windows = new Map<string, FailureWindow>();
  /** Digests of agent keys and admin tokens accepted lately: their owners pass a blocked address. */
  private readonly accepted = new Map<string, number>();

  constructor(@Inject(EdgeConfig) private readonly config: EdgeConfig) {}

  /** Throws `rate_limited` (429, Retry-After) while the address or the credential's prefix is blocked. */
  assertAllowed(address: string, credential: string | undefined, now = Date.now()): void {
    if (credential !== undefined && (this.accepted.get(digest(credential)) ?? 0) > now) return;
    const blockedFor = Math.max(this.blockedFor(addressKey(address), now), credential === undefined ? 0 : this.blockedFor(prefixKey(credential), now));
    if (blockedFor <= 0) return;
    const retryAfterSeconds = Math.max(1, Math.ceil(blockedFor / 1000));
    throw new RelayError(
      'rate_limited',
      `Too many failed authentication attempts (limit ${this.config.RELAY_AUTH_FAILURES_PER_WINDOW} per ${this.config.RELAY_AUTH_FAILURE_WINDOW_MS} ms); retry after ${retryAfterSeconds} s`,
      { limit: this.config.RELAY_AUTH_FAILURES_PER_WINDOW, limit_name: 'RELAY_AUTH_FAILURES_PER_WINDOW', retry_after_seconds: retryAfterSeconds },
    );
  }

  recordFailure(address: string, credential: string | undefined, now = Date.now()): void {
    if (this.windows.size > SWEEP_THRESHOLD) this.sweep(now);
    this.count(addressKey(address), now);
    if (credential !== undefined) this.count(prefixKey(credential), now);
  }

  /** A key or token that was accepted: a blocked address does not stop it for one window. */
  recordSuccess(credential: string, now = Date.now()): void {
    if (this.accepted.size > SWEEP_THRESHOLD) this.sweep(now);
    this.accepted.set(digest(credential), now + this.config.RELAY_AUTH_FAILURE_WINDOW_MS);
  }

  private blockedFor(key: string, now: number): number {
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now || window.failures < this.config.RELAY_AUTH_FAILURES_PER_WINDOW) return 0;
    return window.endsAt - now;
  }

  private count(key: string, now: number): void {
    const window = this.windows.get(key);
    if (window && window.endsAt > now) window.failures += 1;
    else this.windows.set(key, { failures: 1, endsAt: now + this.config.RELAY_AUTH_FAILURE_WINDOW_MS });
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    for (const [key, until] of this.accepted) if (until <= now) this.accepted.delete(key);
  }
}

function addressKey(address: string): string {
  return `address:${address}`;
}

function prefixKey(credential: string): string {
  return `prefix:${credential.slice(0, CREDENTIAL_PREFIX_CHARS)}`;
}

function digest(credential: string): string {
  return createHash('sha256').update(credential, 'utf8').digest('base64');
}
