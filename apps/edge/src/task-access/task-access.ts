import { Inject, Injectable } from '@nestjs/common';
import { TASKS_SUBJECTS, type AgentIdentity, type AgentPublicProfile, type ParticipantRef, type TaskView } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { DirectoryLookups } from '../directory/directory-lookups';

/** An agent as the tasks service records a task's sender or recipient. */
export function participant(agent: AgentIdentity | AgentPublicProfile): ParticipantRef {
  return { id: agent.id, handle: agent.handle, name: agent.name, role: agent.role };
}

export interface ReadOptions {
  /** How many of the newest messages to carry (all that fit one reply when absent). */
  historyLength?: number;
  /** Only the messages after this sequence number, oldest first. */
  afterSequenceNo?: number;
  /** Whether the read marks the task read for the caller. */
  markRead?: boolean;
  /** On an agent's endpoint: that agent's id; the tasks service answers only a task between the caller and it. */
  counterpartId?: string;
}

/**
 * What both dialects ask about one task before and besides their own methods: the endpoint's agent
 * and a caller's read of a task. Each dialect words its own "not found".
 */
@Injectable()
export class TaskAccess {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(DirectoryLookups) private readonly directory: DirectoryLookups,
  ) {}

  /** The agent of `POST /a2a/{handle}`, or null on `POST /a2a`; an unknown or disabled handle is `agent_not_found` (404). */
  async endpointAgent(handle: string | null): Promise<AgentPublicProfile | null> {
    return handle === null ? null : this.directory.profile(handle);
  }

  read(caller: AgentIdentity, taskId: string, options: ReadOptions = {}): Promise<TaskView> {
    return this.rpc.request(TASKS_SUBJECTS.get, {
      caller_id: caller.id,
      task_id: taskId,
      ...(options.historyLength !== undefined ? { history_length: options.historyLength } : {}),
      ...(options.afterSequenceNo !== undefined ? { after_sequence_no: options.afterSequenceNo } : {}),
      ...(options.markRead !== undefined ? { mark_read: options.markRead } : {}),
      ...(options.counterpartId !== undefined ? { counterpart_id: options.counterpartId } : {}),
    });
  }
}
