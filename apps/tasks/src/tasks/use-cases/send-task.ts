import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import {
  chainLimitsWith,
  decideOpenHandoffs,
  orgOfHandle,
  RelayError,
  isTerminalState,
  type ChainLimits,
  type Intent,
  type OpenHandoffsRefusal,
  type ProposedActionDto,
  type SendReply,
  type SendRequest,
} from '@app/contracts';
import { validateArtifactInputs } from '../rules/artifact-rules';
import { idempotencyKeys, SendIdempotency, sendRequestHash } from './send-idempotency';
import { partyOf } from '../rules/state-machine';
import { CreatedForUpstream } from '../upstream-reports/created-for-upstream';
import { createTask, type CreateGuard } from '../store/create-write';
import { RecentPairs } from '../store/recent-pairs';
import { changeHistory, changeTask, type TaskChange } from '../store/change-write';
import { duplicateMessageIdOr, pgError } from '../store/task-repository';
import { toMessageRef, toTaskView, type MessageRow, type TaskRow } from '../store/task-rows';
import { pgPoolOf } from '@app/database';
import { OrgQuotaMetrics } from '@app/metrics';
import { OPEN_HANDOFFS_OF_ORG_SQL } from '../store/sql/open-handoffs.sql';
import { COMMITTED_EVENTS, type CommittedEvents } from '../../outbox/committed-events';
import { OrgStoredBytesQuotas } from '../org-quotas/org-stored-bytes-quotas';
import type { StoredBytesQuotas } from '../store/stored-bytes';

function validateIntent(intent: Intent | undefined, proposedAction: ProposedActionDto | null | undefined): void {
  const hasAction = proposedAction !== undefined && proposedAction !== null;
  if (intent === 'propose_action' && !hasAction) {
    throw new RelayError('invalid_intent_payload', 'intent propose_action requires a proposed_action', { field: 'proposed_action', intent });
  }
  if (intent !== 'propose_action' && hasAction) {
    throw new RelayError('invalid_intent_payload', `proposed_action must be null or omitted for intent ${intent ?? 'inform'}`, {
      field: 'proposed_action',
      intent: intent ?? 'inform',
    });
  }
}

/** The refusal of a create by its sender org's open-handoffs quota, thrown from the create's transaction. */
class OpenHandoffsRefused extends Error {
  constructor(readonly refusal: OpenHandoffsRefusal) {
    super(`The org ${refusal.org} is at its quota of ${refusal.limit} open handoffs`);
  }
}

/**
 * The open-handoffs quota of the sender's org (docs/orgs.md#quotas) as a guard of the create, when
 * the org has one (none otherwise: a create of an org without the quota takes no lock and counts
 * nothing). The creates of the org are serialised on the org's lock, and the org's open handoffs
 * are counted under it (an index-backed count that stops at the quota), so the count sees every
 * create of the org committed before, and creates racing for the last place never both pass.
 */
function openHandoffsGuard(request: SendRequest): CreateGuard | undefined {
  const limit = request.sender_org_open_handoffs;
  if (limit === undefined) return undefined;
  const org = orgOfHandle(request.caller.handle);
  return {
    lockName: `tasks.org_open_handoffs:${org}`,
    check: async (client) => {
      const { rows } = await client.query<{ open: number }>({ name: 'tasks-open-handoffs-of-org', text: OPEN_HANDOFFS_OF_ORG_SQL, values: [org, limit] });
      const refusal = decideOpenHandoffs(request.caller.handle, limit, rows[0].open);
      if (refusal) throw new OpenHandoffsRefused(refusal);
    },
  };
}

/** The chain bounds of this relay (docs/chains.md), from its configuration. */
export const CHAIN_LIMITS = Symbol('CHAIN_LIMITS');

/**
 * A send: a new task (in one statement), or a message appended to an existing one,
 * which resumes a task waiting for the sender's input. Every change of a send (task, message,
 * artifacts, audit row, idempotency keys, outbox event) commits together.
 */
@Injectable()
export class SendTask {
  /** The pg pool behind TypeORM: a send's statements go to it directly. */
  private readonly pool: pg.Pool;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(SendIdempotency) private readonly idempotency: SendIdempotency,
    @Inject(CHAIN_LIMITS) private readonly chainLimits: ChainLimits,
    @Inject(COMMITTED_EVENTS) private readonly committed: CommittedEvents,
    @Inject(OrgQuotaMetrics) private readonly orgQuotaMetrics: OrgQuotaMetrics,
    @Inject(OrgStoredBytesQuotas) private readonly storedBytes: StoredBytesQuotas,
    @Inject(CreatedForUpstream) private readonly createdForUpstream: CreatedForUpstream,
    @Inject(RecentPairs) private readonly recentPairs: RecentPairs,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async send(request: SendRequest): Promise<SendReply> {
    if (request.task_id === undefined && request.recipient === undefined) {
      throw new RelayError('invalid_params', 'recipient is required to create a task', { field: 'recipient' });
    }
    if (request.task_id === undefined && request.recipient?.id === request.caller.id) {
      throw new RelayError('invalid_params', 'recipient cannot be yourself: a handoff goes to another agent', { field: 'recipient' });
    }
    if (request.task_id === undefined || request.intent !== undefined || request.proposed_action != null) {
      validateIntent(request.intent, request.proposed_action);
    }
    validateArtifactInputs(request.artifacts);
    const hash = sendRequestHash(request);
    return request.task_id === undefined ? this.create(request, hash) : this.append(request, hash);
  }

  /**
   * The create: its one statement, or, when one of the sender's keys is already known (a retry,
   * or the loser of two concurrent creates with one key), the first send's answer again.
   */
  private async create(request: SendRequest, hash: string): Promise<SendReply> {
    const guard = openHandoffsGuard(request);
    for (let attempt = 0; ; attempt++) {
      try {
        const created = await createTask(
          this.pool,
          request,
          idempotencyKeys(request),
          hash,
          chainLimitsWith(this.chainLimits, request.org_chain_policy, request.chain_policy),
          guard,
          this.storedBytes,
          this.recentPairs,
        );
        if (created) {
          this.committed.publishCommitted(created.events);
          this.createdForUpstream.created(created.task, created.artifacts.length);
          return {
            task: toTaskView(created.task, request.history_length === 0 ? [] : [created.message], created.artifacts, 0),
            message: toMessageRef(created.message),
            created: true,
            idempotent_replay: false,
          };
        }
        const replay = await this.dataSource.transaction((manager) => this.idempotency.replay(manager, request, hash));
        if (replay) return replay;
        // The known key was deleted (retention) between the create and the replay: create again.
        if (attempt >= 2) throw new Error('A send key kept appearing and disappearing');
      } catch (error) {
        if (error instanceof OpenHandoffsRefused) return this.refusedByOpenHandoffs(request, hash, error.refusal);
        const { code, constraint } = pgError(error);
        if (code === '23505' && constraint === 'idempotency_keys_pkey' && attempt < 2) continue;
        // A retry of a create stored before its org reached its stored-bytes quota gets its first answer.
        if (error instanceof RelayError && error.reason === 'org_quota_exceeded' && idempotencyKeys(request).length > 0) {
          const replay = await this.dataSource.transaction((manager) => this.idempotency.replay(manager, request, hash));
          if (replay) return replay;
        }
        throw duplicateMessageIdOr(error);
      }
    }
  }

  /**
   * A create the open-handoffs quota refused: a retry of a create that was stored before the org
   * reached its quota gets its first answer; any other is refused, having written nothing.
   */
  private async refusedByOpenHandoffs(request: SendRequest, hash: string, refusal: OpenHandoffsRefusal): Promise<SendReply> {
    if (idempotencyKeys(request).length > 0) {
      const replay = await this.dataSource.transaction((manager) => this.idempotency.replay(manager, request, hash));
      if (replay) return replay;
    }
    this.orgQuotaMetrics.rejected(refusal.org, refusal.quota);
    throw new RelayError('org_quota_exceeded', `The org ${refusal.org} is at its quota of ${refusal.limit} open handoffs`, { ...refusal });
  }

  /**
   * An append as a change of the task (its message, artifacts and keys, and the resume of a task
   * waiting for the sender's input); a retry with known keys gets the first answer again.
   */
  private async append(request: SendRequest, hash: string): Promise<SendReply> {
    for (let attempt = 0; ; attempt++) {
      try {
        const replay = await this.dataSource.transaction((manager) => this.idempotency.replay(manager, request, hash));
        if (replay) return replay;
        const { task, message, artifacts, unread, events } = await changeTask(
          this.pool,
          request.task_id as string,
          (current) => appendChange(current, request, hash),
          () => new RelayError('state_changed', 'Another message was appended to the thread at the same time', { task_id: request.task_id }),
          this.storedBytes,
        );
        this.committed.publishCommitted(events);
        return {
          task: toTaskView(task, await changeHistory(this.pool, task, request.history_length), artifacts, unread),
          message: toMessageRef(message as MessageRow),
          created: false,
          idempotent_replay: false,
        };
      } catch (error) {
        const { code, constraint } = pgError(error);
        if (code === '23505' && constraint === 'idempotency_keys_pkey' && attempt < 2) continue;
        throw duplicateMessageIdOr(error);
      }
    }
  }
}

/** What an append makes of the task: refused on another context or a terminal task; a task waiting for the sender's input resumes. */
export function appendChange(current: TaskRow, request: SendRequest, hash: string): TaskChange {
  const party = partyOf(current, request.caller.id, request.counterpart_id);
  if (request.context_id !== undefined && request.context_id !== current.context_id) {
    throw new RelayError('invalid_params', "context_id does not match the task's context", { field: 'context_id' });
  }
  if (current.state === 'held') {
    // What an approver decides on must be what is delivered.
    throw new RelayError('invalid_transition', 'The task is held for approval; messages can be added once it is approved', {
      state: current.state,
      hold: current.hold,
    });
  }
  if (isTerminalState(current.state)) {
    throw new RelayError('thread_terminal', `The thread is ${current.state}; no more messages can be added`, { state: current.state });
  }
  const resumes = current.state === 'input_required' && party === 'sender';
  return {
    party,
    callerId: request.caller.id,
    to: resumes ? 'accepted' : null,
    audit: resumes ? { actorId: request.caller.id, transition: 'resume' } : undefined,
    message: request.message,
    artifacts: request.artifacts,
    keys: { senderId: request.caller.id, keys: idempotencyKeys(request), requestHash: hash },
    events: resumes ? ['message_appended', 'accepted'] : ['message_appended'],
  };
}
