import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { WakeableDelay } from '@app/messaging';
import { DeliveryMetrics, OrgQuotaMetrics } from '@app/metrics';
import { traceDeliveryAttempt, tracerOf } from '@app/tracing';
import { NotifierConfig, slotShares } from '../notifier.config';
import {
  DeliveriesService,
  destinationOf,
  type AttemptOutcome,
  type BegunDelivery,
  type ClaimRequest,
  type DeliveryRow,
  type WrittenWithAttempt,
} from './deliveries.service';
import type { PlannedDelivery } from './delivery-planner';
import { DestinationBreakers, type BreakerTransition, type DestinationOutcome } from '../outbound/destination-breakers';
import type { SendOutcome } from '../outbound/send-outcome';
import { nextRetryDelay, parseRetrySchedule } from '../outbound/retry-schedule';
import { SlackThrottleService } from './slack-throttle.service';
import { APPROVERS_TARGET } from './delivery-planner';
import { DeliveryAssertionSigner } from './delivery-assertion';
import { UpstreamDeliveryService, type UpstreamSendOutcome } from '../upstream/send/upstream-delivery.service';
import { UpstreamHealthService } from '../upstream/health/upstream-health.service';
import { standardWebhookHeaders } from './standard-webhooks';
import { sendWebhook } from './webhook-sender';
import { OrgUpstreamLimits, upstreamOrgOf } from './org-upstream-limits';
import { DirectoryClient } from '../targets/directory-client.service';

/**
 * The longest the worker sleeps when nothing wakes it: new deliveries of this process wake it at
 * once, and it sleeps exactly until the next retry (or lease) it knows of; this bounds how late it
 * notices work recorded by another replica that stopped before attempting it.
 */
const IDLE_MAX_MS = 15_000;
/** How often old finished deliveries are removed from the log (and once at start). */
const PURGE_INTERVAL_MS = 3_600_000;

interface AttemptInFlight {
  attempt: Promise<void>;
  channel: DeliveryRow['channel'];
  destination: string;
  owner: string;
}

/** A slot taken for a delivery about to be recorded leased to this process (see `reserve`). */
interface ReservedSlot {
  channel: DeliveryRow['channel'];
  destination: string;
  owner: string;
}

/**
 * Attempts recorded deliveries: leases due ones fairly (a bounded share of the in-flight slots per
 * destination and per owner, taken in turns, and no more of an org's upstream deliveries than its
 * upstream-in-flight quota), sends them, records each attempt, and schedules
 * retries by the configured schedule until success or the dead letter. A destination that keeps
 * timing out or refusing connections is held by its circuit breaker (see `DestinationBreakers`).
 */
@Injectable()
export class DeliveryWorkerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveryWorkerService.name);
  private readonly schedule: number[];
  private readonly inFlight = new Map<string, AttemptInFlight>();
  /**
   * Whether due deliveries may be waiting for a slot here (the last claim left some, or none could
   * be made): an attempt that ends then looks again. Otherwise one that ends settled needs no claim.
   */
  private dueLeftBehind = true;
  /** Slots taken by deliveries being recorded leased to this process, until they are attempted (or were not recorded). */
  private readonly reserved = new Map<PlannedDelivery, ReservedSlot>();
  private readonly breakers: DestinationBreakers;
  private readonly perDestination: number;
  private readonly perOwner: number;
  private readonly perUpstream: number;
  /** How long the retry schedule lets a delivery live: a delivery held by a breaker longer becomes a dead letter. */
  private readonly scheduleSpanMs: number;
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;
  private purgeTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private readonly delay = new WakeableDelay();
  private readonly orgLimits: OrgUpstreamLimits;

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(DeliveriesService) private readonly deliveries: DeliveriesService,
    @Inject(SlackThrottleService) private readonly slack: SlackThrottleService,
    @Inject(DeliveryMetrics) private readonly metrics: DeliveryMetrics,
    @Inject(UpstreamDeliveryService) private readonly upstream: UpstreamDeliveryService,
    @Inject(UpstreamHealthService) private readonly upstreamHealth: UpstreamHealthService,
    @Inject(DeliveryAssertionSigner) private readonly assertions: DeliveryAssertionSigner,
    @Inject(DirectoryClient) directory: DirectoryClient,
    @Inject(OrgQuotaMetrics) private readonly orgQuotaMetrics: OrgQuotaMetrics,
  ) {
    this.orgLimits = new OrgUpstreamLimits(
      async (org) => (await directory.orgQuotas(org)).upstream_in_flight,
      (org, error) => this.logger.warn({ err: error, org }, 'could not read the org’s upstream-in-flight quota: its deliveries are not held back meanwhile'),
    );
    this.schedule = parseRetrySchedule(config.RELAY_WEBHOOK_RETRY_SCHEDULE);
    this.scheduleSpanMs = this.schedule.reduce((sum, delay) => sum + delay, 0);
    ({ perDestination: this.perDestination, perOwner: this.perOwner, perUpstream: this.perUpstream } = slotShares(config));
    this.breakers = new DestinationBreakers({
      failures: config.RELAY_NOTIFIER_BREAKER_FAILURES,
      openMs: config.RELAY_NOTIFIER_BREAKER_OPEN_MS,
      maxOpenMs: config.RELAY_NOTIFIER_BREAKER_MAX_OPEN_MS,
    });
    upstreamHealth.watchBreakers((url) => this.breakers.stateOf(destinationOf(url)));
  }

  onApplicationBootstrap(): void {
    this.loop = this.run();
    void this.purge();
    this.purgeTimer = setInterval(() => void this.purge(), PURGE_INTERVAL_MS);
    this.purgeTimer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    if (this.purgeTimer) clearInterval(this.purgeTimer);
    this.delay.interrupt();
    await this.loop;
    // Requests still in flight are abandoned (their outcome unknown) and their leases given back:
    // they are attempted again, with the same webhook-id, by whichever process runs next.
    const abandoned = [...this.inFlight.keys()];
    this.abort.abort();
    await Promise.allSettled([...this.inFlight.values()].map((inFlight) => inFlight.attempt));
    await this.deliveries.release(abandoned).catch(() => undefined);
  }

  /** Looks for due deliveries now (called when new ones were recorded). */
  wake(): void {
    this.delay.wake();
  }

  /**
   * Takes a slot, where this process has one free now, for each upstream delivery about to be
   * recorded whose destination's breaker is closed and whose destination and owner have a share
   * left: those are recorded leased to this process with their first attempt begun, and handed to
   * `adopt` (no claim, no wait for the worker's loop). The lease, in ms, of each one taken; the
   * rest are recorded due, for the loop to claim. A slot not adopted is given back with `unreserve`.
   */
  reserve(planned: readonly PlannedDelivery[]): Map<PlannedDelivery, number> {
    const leases = new Map<PlannedDelivery, number>();
    if (this.stopping) return leases;
    for (const delivery of planned) {
      if (delivery.channel !== 'upstream') continue;
      if (this.inFlight.size + this.reserved.size >= this.config.RELAY_NOTIFIER_MAX_IN_FLIGHT) break;
      const destination = destinationOf(delivery.url);
      if (this.breakers.stateOf(destination) !== 'closed') continue;
      const slot: ReservedSlot = { channel: delivery.channel, destination, owner: delivery.target_handle };
      if (!this.hasShare(slot) || !this.fitsOrgLimit(delivery)) continue;
      this.reserved.set(delivery, slot);
      // As a claim leases it: one and a half times its timeout and a second.
      leases.set(delivery, (delivery.timeout_ms ?? this.config.RELAY_WEBHOOK_TIMEOUT_MS) * 1.5 + 1000);
    }
    return leases;
  }

  /** Gives back the slots `reserve` took for these deliveries (they were not recorded leased). */
  unreserve(planned: Iterable<PlannedDelivery>): void {
    for (const delivery of planned) this.reserved.delete(delivery);
    this.wake();
  }

  /** Attempts at once deliveries recorded leased to this process with their first attempt begun, in the slots `reserve` took. */
  adopt(begun: readonly BegunDelivery[]): void {
    for (const { delivery, attemptId, planned } of begun) {
      this.reserved.delete(planned);
      if (this.stopping) {
        // Attempted by whichever process runs next (the attempt begun shows as interrupted).
        void this.deliveries.release([delivery.id]).catch(() => undefined);
        continue;
      }
      this.start(delivery, attemptId);
    }
  }

  /** Whether a delivery to this destination and owner fits in the shares left to them here (as `claimRequest` counts them). */
  private hasShare(slot: ReservedSlot): boolean {
    const upstream = slot.channel === 'upstream';
    let destination = { count: 0, upstreamOnly: upstream };
    let owner = { count: 0, upstreamOnly: upstream };
    for (const taken of this.slotsTaken()) {
      if (taken.destination === slot.destination)
        destination = { count: destination.count + 1, upstreamOnly: destination.upstreamOnly && taken.channel === 'upstream' };
      if (taken.owner === slot.owner) owner = { count: owner.count + 1, upstreamOnly: owner.upstreamOnly && taken.channel === 'upstream' };
    }
    const destinationShare = destination.upstreamOnly ? this.perUpstream : this.perDestination;
    const ownerShare = owner.upstreamOnly ? this.perUpstream : this.perOwner;
    return destination.count < destinationShare && owner.count < ownerShare;
  }

  /**
   * Whether one more upstream delivery fits in its org's upstream-in-flight quota here, counting
   * those in flight and reserved. An org whose quota this process never read is left to the claim,
   * which reads it before attempting anything of the org.
   */
  private fitsOrgLimit(delivery: PlannedDelivery): boolean {
    const org = upstreamOrgOf(delivery);
    if (org === null) return true;
    const limit = this.orgLimits.limitOf(org);
    if (limit === undefined) return false;
    return limit === null || (this.upstreamInFlightByOrg().get(org) ?? 0) < limit;
  }

  /** The slots in use: attempts in flight and slots reserved. */
  private *slotsTaken(): Iterable<ReservedSlot> {
    yield* this.inFlight.values();
    yield* this.reserved.values();
  }

  private async purge(): Promise<void> {
    try {
      const removed = await this.deliveries.purgeOlderThan(this.config.RELAY_DELIVERY_RETENTION_DAYS);
      if (removed > 0) this.logger.log({ removed, days: this.config.RELAY_DELIVERY_RETENTION_DAYS }, 'removed old deliveries');
      const calls = await this.upstreamHealth.purgeOlderThan(this.config.RELAY_DELIVERY_RETENTION_DAYS);
      if (calls > 0) this.logger.log({ removed: calls, days: this.config.RELAY_DELIVERY_RETENTION_DAYS }, 'removed old upstream call records');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not remove old deliveries');
    }
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const free = this.config.RELAY_NOTIFIER_MAX_IN_FLIGHT - this.inFlight.size - this.reserved.size;
      const admission = this.breakers.admission();
      for (const transition of admission.transitions) this.reportTransition(transition);
      let claimed: DeliveryRow[] = [];
      let sleepMs = IDLE_MAX_MS;
      this.dueLeftBehind = true;
      if (free > 0) {
        try {
          const due = await this.deliveries.claimDue(this.claimRequest(free, admission.held, admission.probing));
          claimed = await this.withinOrgLimits(due.claimed);
          this.dueLeftBehind = due.leftDue || claimed.length < due.claimed.length;
          for (const channel of due.expired) this.metrics.expiredHeld(channel);
          if (due.expired.length > 0)
            this.logger.warn(
              { dead: due.expired.length, destinations: [...admission.held.keys()] },
              'deliveries held by open circuit breakers for longer than the retry schedule: dead letters',
            );
          if (due.deferred > 0) {
            this.metrics.deferredByBreaker(due.deferred);
            this.logger.debug({ deferred: due.deferred, destinations: [...admission.held.keys()] }, 'deliveries held by open circuit breakers');
          }
          // The next retry or lease it knows of, or the next probe of an open breaker.
          const waits = [...admission.held.values(), ...(due.nextDueMs === null ? [] : [due.nextDueMs])];
          if (claimed.length < free && waits.length > 0) sleepMs = Math.min(IDLE_MAX_MS, Math.ceil(Math.min(...waits)) + 5);
        } catch (error) {
          this.logger.warn({ err: error }, 'could not claim due deliveries');
          sleepMs = 1000;
        }
      }
      for (const delivery of claimed) this.start(delivery);
      this.metrics.breakers(this.breakers.counts());
      this.reportOrgsInFlight();
      // Full, or the due deliveries wait for a slot of their destination or owner (a finishing
      // attempt wakes it), or nothing more due: sleep until the next due time it knows of; new
      // deliveries of this process wake it at once.
      await this.sleep(sleepMs);
    }
  }

  /** Attempts a delivery leased to this process in a slot of its own (`attemptId`: its attempt begun already). */
  private start(delivery: DeliveryRow, attemptId?: string): void {
    const attempt = traceDeliveryAttempt(tracerOf('notifier'), delivery.channel, delivery.headers, () => this.attempt(delivery, attemptId))
      .catch((error: unknown) => {
        this.logger.error({ err: error, delivery_id: delivery.id }, 'delivery attempt crashed');
        return false;
      })
      .then((settled) => {
        this.inFlight.delete(delivery.id);
        // A retry to schedule, or deliveries waiting for this slot: the loop claims again.
        if (!settled || this.dueLeftBehind) this.wake();
      });
    this.inFlight.set(delivery.id, { attempt, channel: delivery.channel, destination: delivery.destination, owner: delivery.target_handle });
  }

  /**
   * What this process may take now: the shares left to the destinations and owners it has attempts
   * in flight to (an upstream agent's, with only upstream deliveries in flight, the upstream share).
   */
  private claimRequest(limit: number, held: Map<string, number>, probing: Set<string>): ClaimRequest {
    const byDestination = new Map<string, { count: number; upstreamOnly: boolean }>();
    const byOwner = new Map<string, { count: number; upstreamOnly: boolean }>();
    const add = (counts: Map<string, { count: number; upstreamOnly: boolean }>, key: string, upstream: boolean): void => {
      const counted = counts.get(key) ?? { count: 0, upstreamOnly: true };
      counts.set(key, { count: counted.count + 1, upstreamOnly: counted.upstreamOnly && upstream });
    };
    for (const { channel, destination, owner } of this.slotsTaken()) {
      add(byDestination, destination, channel === 'upstream');
      add(byOwner, owner, channel === 'upstream');
    }
    const destinationSlots: Record<string, number> = {};
    for (const [destination, { count, upstreamOnly }] of byDestination)
      destinationSlots[destination] = Math.max(0, (upstreamOnly ? this.perUpstream : this.perDestination) - count);
    // A half-open destination gets one probe at a time.
    for (const destination of probing) destinationSlots[destination] = Math.max(0, 1 - (byDestination.get(destination)?.count ?? 0));
    const ownerSlots: Record<string, number> = {};
    for (const [owner, { count, upstreamOnly }] of byOwner) ownerSlots[owner] = Math.max(0, (upstreamOnly ? this.perUpstream : this.perOwner) - count);
    return {
      orgSlots: this.orgLimits.slots(this.upstreamInFlightByOrg()),
      limit,
      defaultTimeoutMs: this.config.RELAY_WEBHOOK_TIMEOUT_MS,
      perDestination: this.perDestination,
      perOwner: this.perOwner,
      perUpstream: this.perUpstream,
      destinationSlots,
      ownerSlots,
      held: Object.fromEntries([...held].map(([destination, ms]) => [destination, Math.max(1, Math.ceil(ms))])),
      heldAtMostMs: this.scheduleSpanMs,
    };
  }

  /** This process's upstream deliveries in flight (or reserved to start at once), by the org of the agent each goes to. */
  private upstreamInFlightByOrg(): Map<string, number> {
    const byOrg = new Map<string, number>();
    for (const { channel, owner } of this.slotsTaken()) {
      const org = upstreamOrgOf({ channel, target_handle: owner });
      if (org !== null) byOrg.set(org, (byOrg.get(org) ?? 0) + 1);
    }
    return byOrg;
  }

  /**
   * The claimed deliveries to attempt: the claim kept each org it knew the quota of within it; an
   * org seen for the first time has its quota read now, and what it got beyond it is handed back,
   * due at once, to wait for a slot of the org (a finishing attempt wakes the loop).
   */
  private async withinOrgLimits(claimed: DeliveryRow[]): Promise<DeliveryRow[]> {
    const orgs = claimed.flatMap((delivery) => upstreamOrgOf(delivery) ?? []);
    if (orgs.length === 0) return claimed;
    await this.orgLimits.learn(orgs);
    const beyond = new Set(this.orgLimits.beyondLimits(claimed, this.upstreamInFlightByOrg()));
    if (beyond.size === 0) return claimed;
    await this.deliveries.release([...beyond]);
    return claimed.filter((delivery) => !beyond.has(delivery.id));
  }

  /** The gauge of each org with an upstream-in-flight quota: its deliveries in flight here. */
  private reportOrgsInFlight(): void {
    const inFlight = this.upstreamInFlightByOrg();
    for (const org of Object.keys(this.orgLimits.slots(inFlight))) this.orgQuotaMetrics.upstreamDeliveriesInFlight(org, inFlight.get(org) ?? 0);
  }

  /** Tells the destination's breaker how the attempt went: any HTTP answer is an answer; a timeout or a failed connection is not. */
  private recordAtDestination(delivery: DeliveryRow, sent: SendOutcome): void {
    let outcome: DestinationOutcome | null = null;
    if (sent.statusCode !== null) outcome = 'answered';
    else if (sent.retryable) outcome = 'unreachable';
    if (!outcome) return;
    const transition = this.breakers.record(delivery.destination, outcome);
    if (transition) this.reportTransition(transition);
  }

  private reportTransition(transition: BreakerTransition): void {
    this.metrics.breakerTransition(transition.to);
    this.metrics.breakers(this.breakers.counts());
    const context = {
      destination: transition.destination,
      from: transition.from,
      to: transition.to,
      consecutive_failures: transition.consecutiveFailures,
      open_for_ms: transition.openForMs,
    };
    if (transition.to === 'open') {
      this.logger.warn(context, 'circuit breaker open: deliveries to this destination are held until the probe');
      // Its due deliveries are moved past the window at the next claim.
      this.wake();
    } else if (transition.to === 'half_open') this.logger.log(context, 'circuit breaker half-open: one probe delivery goes out');
    else this.logger.log(context, 'circuit breaker closed: the destination answers again');
  }

  private sleep(ms: number): Promise<void> {
    return this.stopping ? Promise.resolve() : this.delay.wait(ms);
  }

  /** Attempts the delivery; answers whether it is settled (delivered, or a dead letter), with no attempt left to schedule. */
  private async attempt(delivery: DeliveryRow, begunAttemptId?: string): Promise<boolean> {
    if (delivery.channel === 'slack' && this.config.RELAY_SLACK_MIN_INTERVAL_MS > 0) {
      const slot = await this.slack.acquire(delivery.url, this.config.RELAY_SLACK_MIN_INTERVAL_MS);
      if (!slot.acquired) {
        await this.deliveries.postpone(delivery.id, slot.waitMs);
        return false;
      }
    }
    const body = JSON.stringify(delivery.body);
    const headers: Record<string, string> = { 'content-type': delivery.content_type, ...delivery.headers };
    // Recorded before the request goes out: a receiver never gets more requests than the log shows.
    const attemptId = begunAttemptId ?? (await this.deliveries.beginAttempt(delivery));
    if (delivery.channel === 'webhook') {
      // The approvers' webhook is signed with the operator's secret (it is no agent's).
      const secret = delivery.target_handle === APPROVERS_TARGET ? this.config.RELAY_APPROVALS_WEBHOOK_SECRET || null : (delivery.webhook_secret ?? null);
      if (!secret) {
        // Never sent unsigned: it waits (by the retry schedule, then a dead letter) for a secret.
        const error = `no webhook signing secret for ${delivery.target_handle}: not sent unsigned; make one with POST /admin/agents/{handle}/webhook-secret`;
        this.logger.warn({ delivery_id: delivery.id, handle: delivery.target_handle }, 'no webhook secret for this agent: not sent');
        return (await this.finish(delivery, attemptId, { ok: false, retryable: true, statusCode: null, error, durationMs: 0, retryAfterMs: null })).settled;
      }
      Object.assign(headers, standardWebhookHeaders(secret, delivery.id, body));
    }
    // Who asked, signed anew for each attempt (docs/chains.md#who-asked-signed).
    const identity = await this.assertions.identityHeaders(delivery);
    const sent: UpstreamSendOutcome =
      delivery.channel === 'upstream'
        ? await this.upstream.deliver(delivery, this.abort.signal, identity)
        : await sendWebhook(
            { url: delivery.url, headers: { ...headers, ...identity }, body },
            {
              timeoutMs: delivery.timeout_ms ?? this.config.RELAY_WEBHOOK_TIMEOUT_MS,
              maxResponseBytes: this.config.RELAY_WEBHOOK_MAX_RESPONSE_BYTES,
              allowPrivate: this.config.RELAY_WEBHOOK_ALLOW_PRIVATE,
              userAgent: 'AgentRelay-Notifier/1',
            },
            this.abort.signal,
          );
    // Stopping: an attempt cut short is attempted again by whichever process runs next; one that
    // made an upstream task is recorded with it, so that no attempt makes it again.
    if (this.abort.signal.aborted && !sent.follow) return false;
    this.recordAtDestination(delivery, sent);
    if (delivery.channel === 'slack' && sent.retryAfterMs !== null) await this.slack.pushBack(delivery.url, sent.retryAfterMs);
    let finished: { settled: boolean; alongside: unknown[] };
    try {
      finished = await this.finish(delivery, attemptId, sent, sent.follow);
    } catch (error) {
      // Nothing written: a stream the attempt opened is let go of, and the attempt is made again later.
      sent.follow?.written(undefined);
      throw error;
    }
    const { settled, alongside } = finished;
    // The upstream's answer is reported once its delivery shows as made.
    const followed = sent.follow?.written(alongside[0]);
    if (followed) await followed();
    if (sent.ok) this.logger.debug({ delivery_id: delivery.id, event: delivery.event, channel: delivery.channel }, 'delivered');
    else
      this.logger.warn(
        { delivery_id: delivery.id, event: delivery.event, channel: delivery.channel, status: sent.statusCode, error: sent.error },
        'delivery attempt failed',
      );
    return settled;
  }

  /**
   * Records the outcome of an attempt begun with `beginAttempt` (and what is written with it,
   * `alongside`) and counts it in the metrics: whether the delivery is settled, and the rows the
   * write alongside returned.
   */
  private async finish(
    delivery: DeliveryRow,
    attemptId: string,
    sent: SendOutcome,
    alongside?: WrittenWithAttempt,
  ): Promise<{ settled: boolean; alongside: unknown[] }> {
    const outcome = this.outcomeOf(delivery, sent);
    const written = await this.deliveries.finishAttempt(delivery, attemptId, outcome, alongside);
    this.metrics.attempted(delivery.channel, outcome.ok ? 'succeeded' : outcome.retryInMs !== null ? 'failed' : 'dead', sent.durationMs / 1000);
    return { settled: outcome.retryInMs === null, alongside: written };
  }

  private outcomeOf(delivery: DeliveryRow, sent: SendOutcome): AttemptOutcome {
    const retryInMs = sent.ok || !sent.retryable ? null : nextRetryDelay(this.schedule, delivery.round_attempts + 1, sent.retryAfterMs);
    return { ok: sent.ok, retryInMs, statusCode: sent.statusCode, error: sent.error, durationMs: sent.durationMs };
  }
}
