import { IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { REDELIVERABLE_STATUSES, type FailureCountsReply, type RedeliverManyReply } from './deliveries.model';

/** The notifier's subjects for the operator console: redeliver many at once, and the failure counts of the overview. */
export const ADMIN_DELIVERIES_SUBJECTS = {
  redeliverMany: 'relay.notifier.v1.deliveries.redeliver_many',
  failureCounts: 'relay.notifier.v1.deliveries.failure_counts',
} as const;

/** The most deliveries one redeliver-many call sends again (the oldest first); call again for the rest. */
export const REDELIVER_MANY_LIMIT = 1000;

export class RedeliverManyRequest {
  @IsIn(REDELIVERABLE_STATUSES)
  status!: (typeof REDELIVERABLE_STATUSES)[number];

  @IsOptional()
  @IsString()
  @MaxLength(255)
  task_id?: string;

  /** Only deliveries to agents of these orgs (a person's scope, set by the edge); absent: all. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  orgs?: string[];
}

export class FailureCountsRequest {
  /** Only deliveries to agents of these orgs (a person's scope, set by the edge); absent: all. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  orgs?: string[];
}

export interface AdminDeliveriesRpc {
  [ADMIN_DELIVERIES_SUBJECTS.redeliverMany]: { request: RedeliverManyRequest; reply: RedeliverManyReply };
  [ADMIN_DELIVERIES_SUBJECTS.failureCounts]: { request: FailureCountsRequest; reply: FailureCountsReply };
}
