import { Inject, Injectable, Logger } from '@nestjs/common';
import { ADMIN_AUDIT_SUBJECTS, CHAIN_REFUSAL_REASONS, RelayError, type AgentIdentity } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { HttpMetrics } from '@app/metrics';

const CHAIN_REFUSALS: ReadonlySet<string> = new Set(CHAIN_REFUSAL_REASONS);

/**
 * A create's chain refusals (docs/chains.md) in the admin audit log, with the sender, the
 * recipient, the bound and the chain's path, and counted by reason in the edge's metrics; and
 * the parent's field named as the caller's dialect spells it when the parent is not the sender's.
 */
@Injectable()
export class ChainRefusals {
  private readonly logger = new Logger(ChainRefusals.name);

  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(HttpMetrics) private readonly metrics: HttpMetrics,
  ) {
    for (const reason of CHAIN_REFUSALS) metrics.declareChainRefusal(reason);
  }

  /** Runs a create command; a chain refusal it answers is audited, then thrown on. */
  async audited<T>(caller: AgentIdentity, recipient: string, parentField: string, create: () => Promise<T>): Promise<T> {
    try {
      return await create();
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      if (error.reason === 'thread_not_found' && error.data?.field === 'parent_task_ids') {
        throw new RelayError('thread_not_found', error.message, { field: parentField });
      }
      if (CHAIN_REFUSALS.has(error.reason)) {
        this.metrics.chainRefused(error.reason);
        await this.record(caller, recipient, error);
      }
      throw error;
    }
  }

  /** The refusal is answered whether or not its row is written (the directory down): that is logged with what the row would have said. */
  private async record(caller: AgentIdentity, recipient: string, refusal: RelayError): Promise<void> {
    const detail = { reason: refusal.reason, sender: caller.handle, ...(refusal.data ?? {}) };
    try {
      await this.rpc.request(ADMIN_AUDIT_SUBJECTS.record, { actor: `agent:${caller.handle}`, action: 'handoff.refuse', target: recipient, detail });
    } catch (error) {
      this.logger.error({ err: error, ...detail, recipient }, 'chain refusal audit row not written');
    }
  }
}
