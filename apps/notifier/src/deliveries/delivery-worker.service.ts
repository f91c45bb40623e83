import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { WakeableDelay } from '@app/messaging';
import { DeliveryMetrics } from '@app/metrics';
import { traceDeliveryAttempt, tracerOf } from '@app/tracing';
import { NotifierConfig } from '../notifier.config';
import { DeliveriesService, type AttemptOutcome, type DeliveryRow } from './deliveries.service';
import { nextRetryDelay, parseRetrySchedule } from './retry-schedule';
import { SlackThrottleService } from './slack-throttle.service';
import { standardWebhookHeaders } from './standard-webhooks';
import { sendWebhook, type SendOutcome } from './webhook-sender';

/**
 * The longest the worker sleeps when nothing wakes it: new deliveries of this process wake it at
 * once, and it sleeps exactly until the next retry (or lease) it knows of; this bounds how late it
 * notices work recorded by another replica that stopped before attempting it.
 */
const IDLE_MAX_MS = 15_000;
/** How often old finished deliveries are removed from the log (and once at start). */
const PURGE_INTERVAL_MS = 3_600_000;

/**
 * Attempts recorded deliveries: leases due ones, sends them (bounded in-flight), records each
 * attempt, and schedules retries by the configured schedule until success or the dead letter.
 */
@Injectable()
export class DeliveryWorkerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveryWorkerService.name);
  private readonly schedule: number[];
  private readonly leaseMs: number;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;
  private purgeTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private readonly delay = new WakeableDelay();

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(DeliveriesService) private readonly deliveries: DeliveriesService,
    @Inject(SlackThrottleService) private readonly slack: SlackThrottleService,
    @Inject(DeliveryMetrics) private readonly metrics: DeliveryMetrics,
  ) {
    this.schedule = parseRetrySchedule(config.RELAY_WEBHOOK_RETRY_SCHEDULE);
    // Long enough for one request with its timeout; a crashed process's leases run out after this.
    this.leaseMs = Math.round(config.RELAY_WEBHOOK_TIMEOUT_MS * 1.5) + 1000;
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
    await Promise.allSettled(this.inFlight.values());
    await this.deliveries.release(abandoned).catch(() => undefined);
  }

  /** Looks for due deliveries now (called when new ones were recorded). */
  wake(): void {
    this.delay.wake();
  }

  private async purge(): Promise<void> {
    try {
      const removed = await this.deliveries.purgeOlderThan(this.config.RELAY_DELIVERY_RETENTION_DAYS);
      if (removed > 0) this.logger.log({ removed, days: this.config.RELAY_DELIVERY_RETENTION_DAYS }, 'removed old deliveries');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not remove old deliveries');
    }
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const free = this.config.RELAY_NOTIFIER_MAX_IN_FLIGHT - this.inFlight.size;
      let claimed: DeliveryRow[] = [];
      let sleepMs = IDLE_MAX_MS;
      if (free > 0) {
        try {
          const due = await this.deliveries.claimDue(free, this.leaseMs);
          claimed = due.claimed;
          if (claimed.length < free && due.nextDueMs !== null) sleepMs = Math.min(IDLE_MAX_MS, Math.ceil(due.nextDueMs) + 5);
        } catch (error) {
          this.logger.warn({ err: error }, 'could not claim due deliveries');
          sleepMs = 1000;
        }
      }
      for (const delivery of claimed) {
        const attempt = traceDeliveryAttempt(tracerOf('notifier'), delivery.channel, delivery.headers, () => this.attempt(delivery))
          .catch((error: unknown) => this.logger.error({ err: error, delivery_id: delivery.id }, 'delivery attempt crashed'))
          .finally(() => {
            this.inFlight.delete(delivery.id);
            this.wake();
          });
        this.inFlight.set(delivery.id, attempt);
      }
      // Full (a finishing attempt wakes it), or nothing more due: sleep until the next due time it
      // knows of; new deliveries of this process wake it at once.
      await this.sleep(sleepMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return this.stopping ? Promise.resolve() : this.delay.wait(ms);
  }

  private async attempt(delivery: DeliveryRow): Promise<void> {
    if (delivery.channel === 'slack' && this.config.RELAY_SLACK_MIN_INTERVAL_MS > 0) {
      const slot = await this.slack.acquire(delivery.url, this.config.RELAY_SLACK_MIN_INTERVAL_MS);
      if (!slot.acquired) {
        await this.deliveries.postpone(delivery.id, slot.waitMs);
        return;
      }
    }
    const body = JSON.stringify(delivery.body);
    const headers: Record<string, string> = { 'content-type': delivery.content_type, ...delivery.headers };
    // Recorded before the request goes out: a receiver never gets more requests than the log shows.
    const attemptId = await this.deliveries.beginAttempt(delivery);
    if (delivery.channel === 'webhook') {
      const secret = delivery.webhook_secret ?? null;
      if (!secret) {
        // Never sent unsigned: it waits (by the retry schedule, then a dead letter) for a secret.
        const error = `no webhook signing secret for ${delivery.target_handle}: not sent unsigned; make one with POST /admin/agents/{handle}/webhook-secret`;
        this.logger.warn({ delivery_id: delivery.id, handle: delivery.target_handle }, 'no webhook secret for this agent: not sent');
        await this.finish(delivery, attemptId, { ok: false, retryable: true, statusCode: null, error, durationMs: 0, retryAfterMs: null });
        return;
      }
      Object.assign(headers, standardWebhookHeaders(secret, delivery.id, body));
    }
    const sent = await sendWebhook(
      { url: delivery.url, headers, body },
      { timeoutMs: this.config.RELAY_WEBHOOK_TIMEOUT_MS, allowPrivate: this.config.RELAY_WEBHOOK_ALLOW_PRIVATE, userAgent: 'AgentRelay-Notifier/1' },
      this.abort.signal,
    );
    if (this.abort.signal.aborted) return;
    if (delivery.channel === 'slack' && sent.retryAfterMs !== null) await this.slack.pushBack(delivery.url, sent.retryAfterMs);
    await this.finish(delivery, attemptId, sent);
    if (sent.ok) this.logger.debug({ delivery_id: delivery.id, event: delivery.event, channel: delivery.channel }, 'delivered');
    else
      this.logger.warn(
        { delivery_id: delivery.id, event: delivery.event, channel: delivery.channel, status: sent.statusCode, error: sent.error },
        'delivery attempt failed',
      );
  }

  /** Records the outcome of an attempt begun with `beginAttempt` and counts it in the metrics. */
  private async finish(delivery: DeliveryRow, attemptId: string, sent: SendOutcome): Promise<void> {
    const outcome = this.outcomeOf(delivery, sent);
    await this.deliveries.finishAttempt(delivery, attemptId, outcome);
    this.metrics.attempted(delivery.channel, outcome.ok ? 'succeeded' : outcome.retryInMs !== null ? 'failed' : 'dead', sent.durationMs / 1000);
  }

  private outcomeOf(delivery: DeliveryRow, sent: SendOutcome): AttemptOutcome {
    const retryInMs = sent.ok || !sent.retryable ? null : nextRetryDelay(this.schedule, delivery.round_attempts + 1, sent.retryAfterMs);
    return { ok: sent.ok, retryInMs, statusCode: sent.statusCode, error: sent.error, durationMs: sent.durationMs };
  }
}
