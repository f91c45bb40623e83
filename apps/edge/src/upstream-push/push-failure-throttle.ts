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
 * whose pushes succeed keeps being heard whatever others send. A token's refusals are taken back
 * when the same token later succeeds for its task from the same address: an upstream may push
 * before the relay has recorded the task it was sent, and those pushes are refused as unknown.
 * An attempt counts as a failure from
 * the moment it is asked, and is taken back only when it succeeds: a burst of concurrent bad tokens
 * cannot pass the budget while its answers are in flight, nor one that overloads the notifier.
 */
@Injectable()
export class PushFailureThrottle {
  private readonly failures: FailureWindows;
  private readonly accepted = new RecentlyAccepted(MAX_ACCEPTED);
  private readonly refused = new Map<string, { address: string; failures: number }>();

  constructor(@Inject(EdgeConfig) private readonly config: EdgeConfig) {
    this.failures = new FailureWindows(config.RELAY_AUTH_FAILURES_PER_WINDOW, config.RELAY_AUTH_FAILURE_WINDOW_MS);
  }

  /**
   * Before the notifier is asked: throws `rate_limited` (429, Retry-After) when the address is past
   * its budget, or the task is and the address has failed in its window, unless this edge accepted
   * this token for this task before. Otherwise the attempt is counted until `recordSuccess` takes it back.
   */
  admit(address: string, taskId: string, token: string, now = Date.now()): void {
    if (!this.accepted.has(passKeyOf(taskId, token))) {
      const addressBlockedFor = this.failures.blockedFor(addressKey(address), now);
      if (addressBlockedFor > 0) throw this.refusal('this address', addressBlockedFor);
      const taskBlockedFor = this.failures.blockedFor(taskKey(taskId), now);
      if (taskBlockedFor > 0 && this.failures.failuresOf(addressKey(address), now) > 0) throw this.refusal('this task', taskBlockedFor);
    }
    this.failures.count(addressKey(address), now);
    this.failures.count(taskKey(taskId), now);
  }

  /** The notifier took the push: the attempt is taken back and the token passes from now on. */
  recordSuccess(address: string, taskId: string, token: string, now = Date.now()): void {
    const pass = passKeyOf(taskId, token);
    const earlier = this.refused.get(pass);
    this.refused.delete(pass);
    const takenBack = 1 + (earlier?.address === address ? earlier.failures : 0);
    for (let attempt = 0; attempt < takenBack; attempt += 1) {
      this.failures.uncount(addressKey(address), now);
      this.failures.uncount(taskKey(taskId), now);
    }
    this.accepted.add(pass);
  }

  /** The notifier refused the token: the attempt stays counted, and a pass the token had is gone. */
  recordFailure(address: string, taskId: string, token: string): void {
    const pass = passKeyOf(taskId, token);
    this.accepted.delete(pass);
    const earlier = this.refused.get(pass);
    this.refused.delete(pass);
    this.refused.set(pass, { address, failures: (earlier?.address === address ? earlier.failures : 0) + 1 });
    if (this.refused.size > MAX_REFUSED) this.refused.delete(this.refused.keys().next().value as string);
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
