import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { RelayError } from '@app/contracts';
import { EdgeConfig } from '../edge.config';
import { FailureWindows, RecentlyAccepted } from '../auth/failure-windows';

/** Task tokens accepted on this edge, kept (least recently accepted first out) to let them pass a throttled address or task. */
const MAX_ACCEPTED = 100_000;

/** Refused task tokens remembered with their address, so that the token's later success takes its failures back; the oldest go first. */
const MAX_REFUSED = 10_000;

/**
 * Throttles the push receiver's failing callers before they reach the notifier (each check there is
 * a database read), with the budget of failed sign-ins (`RELAY_AUTH_FAILURES_PER_WINDOW` per
 * `RELAY_AUTH_FAILURE_WINDOW_MS`), counted in this edge process in bounded memory:
 *
 * - per client address: an address past its budget is answered 429 without a lookup;
 * - per task (the receiver URL's task id): a task past its budget, as from many addresses at once,
 *   takes pushes only from addresses with no failure in their window.
 *
 * A token this edge accepted for a task passes both (the notifier still checks it), so an upstream
 * whose pushes succeed keeps being heard whatever others send. A token's failures are taken back
 * when the same token later succeeds for its task from the same address: an upstream may push
 * before the relay has recorded the task it was sent, and those pushes are refused as unknown.
 * Once an address or task has failed, its attempts still in flight count against its budget too,
 * so a burst of concurrent bad tokens cannot pass it while its answers are on their way; a push the
 * notifier did not answer counts as a failure (a flood that overloads the notifier is throttled).
 */
@Injectable()
export class PushFailureThrottle {
  private readonly failures: FailureWindows;
  private readonly inFlight = new Map<string, number>();
  private readonly accepted = new RecentlyAccepted(MAX_ACCEPTED);
  private readonly refused = new Map<string, { address: string; failures: number }>();

  constructor(@Inject(EdgeConfig) private readonly config: EdgeConfig) {
    this.failures = new FailureWindows(config.RELAY_AUTH_FAILURES_PER_WINDOW, config.RELAY_AUTH_FAILURE_WINDOW_MS);
  }

  /**
   * Before the notifier is asked: throws `rate_limited` (429, Retry-After) when the address is past
   * its budget, or the task is and the address has failed in its window, unless this edge accepted
   * this token for this task before. Otherwise the attempt is in flight until its outcome is recorded.
   */
  admit(address: string, taskId: string, token: string, now = Date.now()): void {
    if (!this.accepted.has(passKeyOf(taskId, token))) {
      const addressBlockedFor = this.blockedFor(addressKey(address), now);
      if (addressBlockedFor > 0) throw this.refusal('this address', addressBlockedFor);
      const taskBlockedFor = this.blockedFor(taskKey(taskId), now);
      if (taskBlockedFor > 0 && this.failures.failuresOf(addressKey(address), now) > 0) throw this.refusal('this task', taskBlockedFor);
    }
    this.take(addressKey(address), 1);
    this.take(taskKey(taskId), 1);
  }

  /** The notifier took the push: the token's earlier failures from this address are taken back, and it passes from now on. */
  recordSuccess(address: string, taskId: string, token: string, now = Date.now()): void {
    this.land(address, taskId);
    const pass = passKeyOf(taskId, token);
    const earlier = this.refused.get(pass);
    this.refused.delete(pass);
    for (let failure = 0; earlier?.address === address && failure < earlier.failures; failure += 1) {
      this.failures.uncount(addressKey(address), now);
      this.failures.uncount(taskKey(taskId), now);
    }
    this.accepted.add(pass);
  }

  /**
   * The notifier refused the token (`refused`), or did not answer: a failure of the address and the
   * task either way; a refused token also loses the pass it had.
   */
  recordFailure(address: string, taskId: string, token: string, refused: boolean, now = Date.now()): void {
    this.land(address, taskId);
    this.failures.count(addressKey(address), now);
    this.failures.count(taskKey(taskId), now);
    const pass = passKeyOf(taskId, token);
    if (refused) this.accepted.delete(pass);
    const earlier = this.refused.get(pass);
    this.refused.delete(pass);
    this.refused.set(pass, { address, failures: (earlier?.address === address ? earlier.failures : 0) + 1 });
    if (this.refused.size > MAX_REFUSED) this.refused.delete(this.refused.keys().next().value as string);
  }

  /** How long `key` stays refused: past its budget, or, once it has failed, with its attempts in flight reaching it. */
  private blockedFor(key: string, now: number): number {
    const failures = this.failures.failuresOf(key, now);
    if (failures === 0) return 0;
    return failures + (this.inFlight.get(key) ?? 0) >= this.config.RELAY_AUTH_FAILURES_PER_WINDOW ? this.failures.windowLeft(key, now) : 0;
  }

  private land(address: string, taskId: string): void {
    this.take(addressKey(address), -1);
    this.take(taskKey(taskId), -1);
  }

  private take(key: string, change: 1 | -1): void {
    const count = (this.inFlight.get(key) ?? 0) + change;
    if (count > 0) this.inFlight.set(key, count);
    else this.inFlight.delete(key);
  }

  private refusal(source: string, blockedFor: number): RelayError {
    const retryAfterSeconds = Math.max(1, Math.ceil(blockedFor / 1000));
    return new RelayError(
      'rate_limited',
      `Too many push notifications with a wrong token for ${source} (limit ${this.config.RELAY_AUTH_FAILURES_PER_WINDOW} per ${this.config.RELAY_AUTH_FAILURE_WINDOW_MS} ms); retry after ${retryAfterSeconds} s`,
      { limit: this.config.RELAY_AUTH_FAILURES_PER_WINDOW, limit_name: 'RELAY_AUTH_FAILURES_PER_WINDOW', retry_after_seconds: retryAfterSeconds },
    );
  }
}

function addressKey(address: string): string {
  return `address:${address}`;
}

function taskKey(taskId: string): string {
  return `task:${taskId}`;
}

function passKeyOf(taskId: string, token: string): string {
  return createHash('sha256').update(taskId, 'utf8').update('\n').update(token, 'utf8').digest('base64');
}
