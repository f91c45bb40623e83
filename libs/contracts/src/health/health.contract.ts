export const HEALTH_SUBJECTS = {
  tasks: 'relay.tasks.v1.health',
  directory: 'relay.directory.v1.health',
  notifier: 'relay.notifier.v1.health',
} as const;

export type DependencyStatus = 'up' | 'down';

export class HealthRequest {}

export interface HealthReply {
  service: string;
  status: 'ok' | 'degraded';
  postgres: DependencyStatus;
  instance: string;
}

export interface HealthRpc {
  [HEALTH_SUBJECTS.tasks]: { request: HealthRequest; reply: HealthReply };
  [HEALTH_SUBJECTS.directory]: { request: HealthRequest; reply: HealthReply };
  [HEALTH_SUBJECTS.notifier]: { request: HealthRequest; reply: HealthReply };
}
