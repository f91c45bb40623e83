import type { HealthRpc } from './health/health.contract';
import type { AdminAuditRpc } from './directory/admin-audit.contract';
import type { DirectoryRpc } from './directory/directory.contract';
import type { OrgsRpc } from './orgs/orgs.contract';
import type { PersonRolesRpc } from './orgs/person-roles.contract';
import type { AdminDeliveriesRpc } from './notifier/admin-deliveries.contract';
import type { NotifierRpc } from './notifier/notifier.contract';
import type { EventConsumersRpc } from './notifier/event-consumers.contract';
import type { PushConfigRpc } from './tasks/push-configs.contract';
import type { AdminTasksRpc } from './tasks/admin-tasks.contract';
import type { TasksRpc } from './tasks/tasks.contract';
import type { UpstreamReportsRpc } from './tasks/upstream-reports.contract';
import type { ApprovalsRpc } from './tasks/approvals.contract';

/**
 * Every request subject with its request payload and reply type. Both the edge's client and the
 * services' handlers are typed from this map, so a wrong payload is a compile error on both sides.
 */
export type RpcMap = HealthRpc &
  NotifierRpc &
  EventConsumersRpc &
  AdminDeliveriesRpc &
  DirectoryRpc &
  OrgsRpc &
  PersonRolesRpc &
  AdminAuditRpc &
  TasksRpc &
  UpstreamReportsRpc &
  AdminTasksRpc &
  PushConfigRpc &
  ApprovalsRpc;

export type RpcSubject = keyof RpcMap;
export type RpcRequest<S extends RpcSubject> = RpcMap[S]['request'];
export type RpcReply<S extends RpcSubject> = RpcMap[S]['reply'];
