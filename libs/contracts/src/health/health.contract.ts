export const HEALTH_SUBJECTS = {
  tasks: 'relay.tasks.v1.health',
  directory: 'relay.directory.v1.health',
  notifier: 'relay.notifier.v1.health',
} as const;

export type DependencyStatus = 'up' | 'down';

export class HealthRequest {}

export interface ServiceLoadView {
  in_flight: number;
  max_in_flight: number | null;
  saturated_since: string | null;
  shed_total: number;
  misdirected_replies_total: number;
}

export interface HealthReply {
  service: string;
  /** `overloaded`: at its in-flight maximum, refusing every new request, for several seconds. */
  status: 'ok' | 'degraded' | 'overloaded';
  postgres: DependencyStatus;
  instance: string;
  /** The deployment id of the service's database: every service of one relay answers the same. */
  deployment: string;
  load?: ServiceLoadView;
}

export interface HealthRpc {
  [HEALTH_SUBJECTS.tasks]: { request: HealthRequest; reply: HealthReply };
  [HEALTH_SUBJECTS.directory]: { request: HealthRequest; reply: HealthReply };
  [HEALTH_SUBJECTS.notifier]: { request: HealthRequest; reply: HealthReply };
}
