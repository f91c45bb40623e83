import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { WakeableDelay } from '@app/messaging';
import { DeliveryMetrics } from '@app/metrics';
import { traceDeliveryAttempt, tracerOf } from '@app/tracing';
import { NotifierConfig } from '../notifier.config';
import { WebhookSecretsService } from '../secrets/webhook-secrets.service';
import { DeliveriesService, type AttemptOutcome, type DeliveryRow } from './deliveries.service';
import { nextRetryDelay, parseRetrySchedule } from './retry-schedule';
import { SlackThrottleService } from './slack-throttle.service';
import { standardWebhookHeaders } from './standard-webhooks';
import { sendWebhook, type SendOutcome } from './webhook-sender';

/** How often the worker looks for due retries when nothing wakes it. */
const POLL_INTERVAL_MS = 200;
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
    @Inject(WebhookSecretsService) private readonly secrets: WebhookSecretsService,
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
      if (free > 0) {
        try {
          claimed = await this.deliveries.claimDue(free, this.leaseMs);
        } catch (error) {
          this.logger.warn({ err: error }, 'could not claim due deliveries');
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
      if (claimed.length === 0 || claimed.length === free) await this.sleep(POLL_INTERVAL_MS);
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
    if (delivery.channel === 'webhook') {
      const secret = await this.secrets.secretOf(delivery.target_handle);
      if (secret) Object.assign(headers, standardWebhookHeaders(secret, delivery.id, body));
      else this.logger.warn({ delivery_id: delivery.id, handle: delivery.target_handle }, 'no webhook secret for this agent: sending unsigned');
    }
    const sent = await sendWebhook(
      { url: delivery.url, headers, body },
      { timeoutMs: this.config.RELAY_WEBHOOK_TIMEOUT_MS, allowPrivate: this.config.RELAY_WEBHOOK_ALLOW_PRIVATE, userAgent: 'AgentRelay-Notifier/1' },
      this.abort.signal,
    );
    if (this.abort.signal.aborted) return;
    if (delivery.channel === 'slack' && sent.retryAfterMs !== null) await this.slack.pushBack(delivery.url, sent.retryAfterMs);
    const outcome = this.outcomeOf(delivery, sent);
    await this.deliveries.recordAttempt(delivery, outcome);
    this.metrics.attempted(delivery.channel, outcome.ok ? 'succeeded' : outcome.retryInMs !== null ? 'failed' : 'dead', sent.durationMs / 1000);
    if (sent.ok) this.logger.debug({ delivery_id: delivery.id, event: delivery.event, channel: delivery.channel }, 'delivered');
    else this.logger.warn({ delivery_id: delivery.id, event: delivery.event, channel: delivery.channel, status: sent.statusCode, error: sent.error }, 'delivery attempt failed');
  }

  private outcomeOf(delivery: DeliveryRow, sent: SendOutcome): AttemptOutcome {
    const retryInMs = sent.ok || !sent.retryable ? null : nextRetryDelay(this.schedule, delivery.round_attempts + 1, sent.retryAfterMs);
    return { ok: sent.ok, retryInMs, statusCode: sent.statusCode, error: sent.error, durationMs: sent.durationMs };
  }
}
