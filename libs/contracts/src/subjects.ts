/** Request subjects follow one grammar: `relay.<service>.v1.<verb>[.<verb>]`. */
export const SUBJECT_GRAMMAR = /^relay\.(tasks|directory|notifier)\.v1\.[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;

/** JetStream subjects of task events: `relay.events.task.<event>`. */
export const TASK_EVENT_SUBJECT_PREFIX = 'relay.events.task';

export type RelayService = 'tasks' | 'directory' | 'notifier';

export const SERVICE_QUEUE_GROUPS: Record<RelayService, string> = {
  tasks: 'tasks',
  directory: 'directory',
  notifier: 'notifier',
};

/**
 * Applies a deployment (or test run) prefix to a subject, so that several relays or test runs
 * can share one NATS server without seeing each other's traffic.
 */
export function prefixedSubject(prefix: string, subject: string): string {
  return prefix ? `${prefix}.${subject}` : subject;
}
