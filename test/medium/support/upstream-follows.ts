import { TaskState, type Task } from '@a2a-js/sdk';
import type { DataSource } from 'typeorm';
import { NOTHING_REPORTED } from '@app/a2a';
import type { NatsRpcClient } from '@app/messaging';
import { NotifierConfig } from '../../../apps/notifier/src/notifier.config';
import type { AgentTargetsService } from '../../../apps/notifier/src/targets/agent-targets.service';
import type { UpstreamClientsService } from '../../../apps/notifier/src/upstream/client/upstream-clients.service';
import { UpstreamFollowerService, type FollowStart } from '../../../apps/notifier/src/upstream/follow/upstream-follower.service';
import type { UpstreamCredentialsService } from '../../../apps/notifier/src/upstream/identity/upstream-credentials.service';

/** A follower on `dataSource` whose collaborators beyond Postgres and `rpc` are never reached. */
export function upstreamFollower(dataSource: DataSource, rpc: NatsRpcClient = {} as NatsRpcClient): UpstreamFollowerService {
  return new UpstreamFollowerService(
    new NotifierConfig(),
    dataSource,
    rpc,
    {} as AgentTargetsService,
    {} as UpstreamCredentialsService,
    {} as UpstreamClientsService,
  );
}

/** The follow of relay task `taskId` delivered as upstream task `up-<taskId>`, nothing reported yet. */
export function followStart(taskId: string, sender = 'sender@acme'): FollowStart {
  return {
    taskId,
    recipient: { id: 'a1', handle: 'upstream@acme', name: 'Upstream', role: null },
    sender,
    upstreamTaskId: `up-${taskId}`,
    upstreamContextId: 'c',
    answer: null,
    reported: NOTHING_REPORTED,
  };
}

/** An upstream task the agent completed, with nothing in it. */
export function completedUpstreamTask(id: string): Task {
  return {
    id,
    contextId: 'c',
    status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
    artifacts: [],
    history: [],
    metadata: undefined,
  };
}
