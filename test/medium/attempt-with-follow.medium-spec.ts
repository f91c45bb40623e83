import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { SecretCipher } from '@app/secrets';
import { DeliveriesService, type DeliveryRow } from '../../apps/notifier/src/deliveries/deliveries.service';
import type { PlannedDelivery } from '../../apps/notifier/src/deliveries/delivery-planner';
import type { UpstreamFollowerService } from '../../apps/notifier/src/upstream/follow/upstream-follower.service';
import { openNotifierDatabase } from './support/notifier-database';
import { completedUpstreamTask, followStart, upstreamFollower } from './support/upstream-follows';

describe('an upstream attempt recorded with the follow of the task it made, against Postgres', () => {
  let dataSource: DataSource;
  let deliveries: DeliveriesService;
  let follower: UpstreamFollowerService;

  beforeAll(async () => {
    dataSource = await openNotifierDatabase();
    deliveries = new DeliveriesService(dataSource, new SecretCipher([{ id: 'k1', key: randomBytes(32) }]));
    // Nothing beyond Postgres is reached: the answer is settled, and its look is never run.
    follower = upstreamFollower(dataSource);
  });

  afterAll(async () => {
    await dataSource.destroy();
  });

  /** An upstream delivery recorded leased to this process, its first attempt begun. */
  const begunDelivery = async (taskId: string): Promise<{ delivery: DeliveryRow; attemptId: string }> => {
    const planned: PlannedDelivery = {
      channel: 'upstream',
      event: 'a2a.task.created',
      target_handle: 'upstream@acme',
      target_ref: 'upstream@acme',
      url: 'https://upstream.example.com/a2a',
      content_type: 'application/json',
      headers: {},
      body: { task_id: taskId },
    };
    const { begun } = await deliveries.recordMany([{ eventId: randomUUID(), taskId, planned: [planned] }], new Map([[planned, 30_000]]));
    expect(begun).toHaveLength(1);
    return begun[0];
  };
  const delivered = { ok: true, retryInMs: null, statusCode: 200, error: null, durationMs: 12 };
  const stateOf = async (deliveryId: string, taskId: string) => {
    const [delivery] = (await dataSource.query(`SELECT "status", "locked_until" IS NULL AS "released" FROM "notifier"."deliveries" WHERE "id" = $1`, [
      deliveryId,
    ])) as Array<{ status: string; released: boolean }>;
    const attempts = (await dataSource.query(`SELECT "status_code", "duration_ms" FROM "notifier"."delivery_attempts" WHERE "delivery_id" = $1`, [
      deliveryId,
    ])) as Array<{ status_code: number | null; duration_ms: number | null }>;
    const follows = (await dataSource.query(
      `SELECT "status", "upstream_task_id", "locked_until" IS NOT NULL AS "held" FROM "notifier"."upstream_tasks" WHERE "task_id" = $1`,
      [taskId],
    )) as Array<{ status: string; upstream_task_id: string; held: boolean }>;
    return { delivery, attempts, follows };
  };

  it('writes the outcome and the follow in one statement, and answers the row it inserted', async () => {
    const taskId = randomUUID();
    const { delivery, attemptId } = await begunDelivery(taskId);
    const follow = follower.followWithAttempt(followStart(taskId), undefined, { answer: completedUpstreamTask(`up-${taskId}`) });
    const rows = await deliveries.finishAttempt(delivery, attemptId, delivered, follow);
    expect(rows).toEqual([expect.objectContaining({ task_id: taskId, upstream_task_id: `up-${taskId}` })]);
    expect(await stateOf(delivery.id, taskId)).toEqual({
      delivery: { status: 'succeeded', released: true },
      attempts: [{ status_code: 200, duration_ms: 12 }],
      // Held for the delivery's first look at the answer.
      follows: [{ status: 'following', upstream_task_id: `up-${taskId}`, held: true }],
    });
    // Followed already (an attempt made again after a crash): nothing inserted, nothing to look at.
    const again = follower.followWithAttempt(followStart(taskId), undefined, { answer: completedUpstreamTask(`up-${taskId}`) });
    const second = await begunDelivery(randomUUID());
    const none = await deliveries.finishAttempt(second.delivery, second.attemptId, delivered, again);
    expect(none).toEqual([]);
    expect(again.written(none[0])).toBeNull();
  });

  it('writes neither when the follow cannot be written: the attempt stays open, to be made again', async () => {
    const taskId = randomUUID();
    const { delivery, attemptId } = await begunDelivery(taskId);
    // A follow without a sender breaks the row's NOT NULL: the whole statement fails.
    const broken = follower.followWithAttempt(followStart(taskId, null as unknown as string), undefined, { answer: completedUpstreamTask(`up-${taskId}`) });
    await expect(deliveries.finishAttempt(delivery, attemptId, delivered, broken)).rejects.toThrow(/null value/);
    expect(await stateOf(delivery.id, taskId)).toEqual({
      delivery: { status: 'pending', released: false },
      attempts: [{ status_code: null, duration_ms: null }],
      follows: [],
    });
  });

  it('writes the outcome alone when nothing goes with it', async () => {
    const taskId = randomUUID();
    const { delivery, attemptId } = await begunDelivery(taskId);
    await expect(deliveries.finishAttempt(delivery, attemptId, { ...delivered, ok: false, statusCode: 503, error: 'busy', retryInMs: 1000 })).resolves.toEqual(
      [],
    );
    expect(await stateOf(delivery.id, taskId)).toEqual({
      delivery: { status: 'failed', released: true },
      attempts: [{ status_code: 503, duration_ms: 12 }],
      follows: [],
    });
  });
});
