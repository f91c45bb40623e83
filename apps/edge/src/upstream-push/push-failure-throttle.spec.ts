import { loadConfig } from '@app/config';
import { RelayError } from '@app/contracts';
import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { EdgeConfig } from '../edge.config';
import { PushFailureThrottle } from './push-failure-throttle';

const WINDOW_MS = 10_000;
const NOW = 1_000_000;
const EDGE_REQUIRED = {
  RELAY_NOTIFIER_PUBLIC_KEY: generateNotifierSealingKeyPair('test').publicKey,
  RELAY_ASSERTION_PUBLIC_KEYS: generateAssertionKeyPair('test').publicKey,
};

function throttle(): PushFailureThrottle {
  return new PushFailureThrottle(
    loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_AUTH_FAILURES_PER_WINDOW: '3', RELAY_AUTH_FAILURE_WINDOW_MS: String(WINDOW_MS) }),
  );
}

/** One push that the notifier refuses. */
function refused(subject: PushFailureThrottle, address: string, taskId: string, token: string, now = NOW): void {
  subject.admit(address, taskId, token, now);
  subject.recordFailure(address, taskId, token, true, now);
}

function refusalOf(attempt: () => void): RelayError {
  try {
    attempt();
  } catch (error) {
    if (error instanceof RelayError) return error;
    throw error;
  }
  throw new Error('the attempt was admitted');
}

describe('PushFailureThrottle', () => {
  it('refuses an address past its budget with the time left, and admits it again after the window', () => {
    const subject = throttle();
    for (let attempt = 0; attempt < 3; attempt += 1) refused(subject, '10.0.0.9', `task-${attempt}`, `wrong-${attempt}`);
    const refusal = refusalOf(() => subject.admit('10.0.0.9', 'task-x', 'wrong-x', NOW + 1000));
    expect(refusal.reason).toBe('rate_limited');
    expect(refusal.data).toMatchObject({ limit_name: 'RELAY_AUTH_FAILURES_PER_WINDOW', retry_after_seconds: 9 });
    expect(() => subject.admit('10.0.0.1', 'task-x', 'other', NOW + 1000)).not.toThrow();
    expect(() => subject.admit('10.0.0.9', 'task-x', 'wrong-x', NOW + WINDOW_MS)).not.toThrow();
  });

  it('never refuses an address with no failure for its attempts in flight, and counts them once it has failed', () => {
    const subject = throttle();
    for (let attempt = 0; attempt < 10; attempt += 1) subject.admit('10.0.0.1', `task-${attempt}`, `first-${attempt}`, NOW);
    subject.recordFailure('10.0.0.9', 'task-x', 'wrong-x', true, NOW);
    subject.admit('10.0.0.9', 'task-0', 'wrong-0', NOW);
    subject.admit('10.0.0.9', 'task-1', 'wrong-1', NOW);
    expect(refusalOf(() => subject.admit('10.0.0.9', 'task-2', 'wrong-2', NOW)).reason).toBe('rate_limited');
  });

  it('counts a push the notifier did not answer as a failure, without taking the pass of a token accepted before', () => {
    const subject = throttle();
    subject.admit('10.0.0.1', 'task-a', 'good', NOW);
    subject.recordSuccess('10.0.0.1', 'task-a', 'good', NOW);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      subject.admit('10.0.0.1', 'task-a', 'good', NOW);
      subject.recordFailure('10.0.0.1', 'task-a', 'good', false, NOW);
    }
    expect(refusalOf(() => subject.admit('10.0.0.1', 'task-b', 'new', NOW)).reason).toBe('rate_limited');
    expect(() => subject.admit('10.0.0.1', 'task-a', 'good', NOW)).not.toThrow();
  });

  it('lets a token accepted for its task pass its throttled address, not for another task', () => {
    const subject = throttle();
    subject.admit('10.0.0.9', 'task-a', 'good', NOW);
    subject.recordSuccess('10.0.0.9', 'task-a', 'good', NOW);
    for (let attempt = 0; attempt < 3; attempt += 1) refused(subject, '10.0.0.9', `task-${attempt}`, `wrong-${attempt}`);
    expect(() => subject.admit('10.0.0.9', 'task-a', 'good', NOW)).not.toThrow();
    expect(refusalOf(() => subject.admit('10.0.0.9', 'task-b', 'good', NOW)).reason).toBe('rate_limited');
  });

  it('a task flooded from many addresses takes pushes only from addresses with no failure', () => {
    const subject = throttle();
    for (let address = 1; address <= 3; address += 1) refused(subject, `10.0.1.${address}`, 'task-a', `wrong-${address}`);
    expect(refusalOf(() => subject.admit('10.0.1.1', 'task-a', 'wrong-again', NOW)).message).toContain('for this task');
    expect(() => subject.admit('10.0.0.1', 'task-a', 'first-try', NOW)).not.toThrow();
  });

  it('takes back the refusals of a token that later succeeds for its task from the same address', () => {
    const subject = throttle();
    refused(subject, '10.0.0.1', 'task-a', 'early');
    refused(subject, '10.0.0.1', 'task-a', 'early');
    subject.admit('10.0.0.1', 'task-a', 'early', NOW);
    subject.recordSuccess('10.0.0.1', 'task-a', 'early', NOW);
    for (let attempt = 0; attempt < 2; attempt += 1) refused(subject, '10.0.0.1', `task-${attempt}`, `wrong-${attempt}`);
    expect(() => subject.admit('10.0.0.1', 'task-new', 'new', NOW)).not.toThrow();
  });
});
