import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';

function hashOf(url: string): string {
  return createHash('sha256').update(url).digest('hex');
}

/**
 * Slack's per-webhook rate, shared by all notifier replicas through Postgres: a post takes the
 * webhook's slot only when it is free, and moves it `intervalMs` ahead; a 429's `Retry-After`
 * pushes it further.
 */
@Injectable()
export class SlackThrottleService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Takes the webhook's slot now; otherwise answers how long until it is free. */
  async acquire(url: string, intervalMs: number): Promise<{ acquired: true } | { acquired: false; waitMs: number }> {
    const hash = hashOf(url);
    const taken = (await this.dataSource.query(
      `INSERT INTO "notifier"."slack_slots" ("url_hash", "next_at") VALUES ($1, now() + make_interval(secs => $2::double precision / 1000))
       ON CONFLICT ("url_hash") DO UPDATE SET "next_at" = EXCLUDED."next_at" WHERE "slack_slots"."next_at" <= now()
       RETURNING "url_hash"`,
      [hash, intervalMs],
    )) as unknown[];
    if (taken.length > 0) return { acquired: true };
    const [slot] = (await this.dataSource.query(
      `SELECT GREATEST(0, EXTRACT(EPOCH FROM ("next_at" - now())) * 1000)::int AS "wait_ms" FROM "notifier"."slack_slots" WHERE "url_hash" = $1`,
      [hash],
    )) as Array<{ wait_ms: number }>;
    return { acquired: false, waitMs: Math.max(slot?.wait_ms ?? 0, 10) };
  }

  /** Slack asked to wait (`Retry-After`): no post to this webhook before then. */
  async pushBack(url: string, waitMs: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO "notifier"."slack_slots" ("url_hash", "next_at") VALUES ($1, now() + make_interval(secs => $2::double precision / 1000))
       ON CONFLICT ("url_hash") DO UPDATE SET "next_at" = GREATEST("slack_slots"."next_at", EXCLUDED."next_at")`,
      [hashOf(url), waitMs],
    );
  }
}
