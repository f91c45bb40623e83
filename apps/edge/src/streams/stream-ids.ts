import { Inject, Injectable, Logger } from '@nestjs/common';
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { RelayError } from '@app/contracts';
import { EdgeConfig } from '../edge.config';

/** What an id belongs to: one task's stream, or the caller's live inbox. */
export type StreamScope = { task: string } | 'inbox';

const BLOCK_BYTES = 16;
const TAG_BYTES = 8;
const MAX_POSITION = (1n << 64n) - 1n;
/** One AES block in base64url, without padding. */
const STREAM_ID = /^[A-Za-z0-9_-]{22}$/;
const HKDF_INFO = 'agentrelay stream ids';

/**
 * The SSE ids of the agents' streams (docs/events.md#positions-and-stream-ids): an outbox position
 * sealed for one agent and one stream, so that an id reveals nothing beyond the caller's own
 * events. An id is one AES-256 block, the position (big-endian uint64) and a tag that binds it to
 * the agent and the scope; every edge with the same RELAY_STREAM_ID_KEY reads it.
 */
@Injectable()
export class StreamIds {
  private readonly logger = new Logger(StreamIds.name);
  private readonly key: Buffer;

  constructor(@Inject(EdgeConfig) config: EdgeConfig) {
    this.key = streamIdKey(config, () =>
      this.logger.warn(
        'RELAY_STREAM_ID_KEY and RELAY_ADMIN_TOKEN are unset: stream ids hold only on this edge until it restarts; set RELAY_STREAM_ID_KEY to resume across edges and restarts',
      ),
    );
  }

  /** The id a stream of `agentId` shows for `position`. */
  encode(position: string, agentId: string, scope: StreamScope): string {
    const value = BigInt(position);
    if (value < 0n || value > MAX_POSITION) throw new Error(`position ${position} does not fit a stream id`);
    const block = Buffer.alloc(BLOCK_BYTES);
    block.writeBigUInt64BE(value, 0);
    this.tag(agentId, scope).copy(block, BLOCK_BYTES - TAG_BYTES);
    const cipher = createCipheriv('aes-256-ecb', this.key, null).setAutoPadding(false);
    return Buffer.concat([cipher.update(block), cipher.final()]).toString('base64url');
  }

  /** The position of an id this agent's stream showed, or `invalid_params` naming Last-Event-ID (another agent's or stream's id, or none of this relay's). */
  decode(id: string, agentId: string, scope: StreamScope): string {
    if (STREAM_ID.test(id)) {
      const sealed = Buffer.from(id, 'base64url');
      if (sealed.length === BLOCK_BYTES) {
        const decipher = createDecipheriv('aes-256-ecb', this.key, null).setAutoPadding(false);
        const block = Buffer.concat([decipher.update(sealed), decipher.final()]);
        if (timingSafeEqual(block.subarray(BLOCK_BYTES - TAG_BYTES), this.tag(agentId, scope))) return block.readBigUInt64BE(0).toString();
      }
    }
    const stream = scope === 'inbox' ? 'your live inbox' : `task ${scope.task}`;
    throw new RelayError('invalid_params', `Last-Event-ID '${id.slice(0, 40)}' is not an event id of ${stream}; connect again without it`, {
      field: 'Last-Event-ID',
    });
  }

  /**
   * An error of the tasks service as this agent's stream shows it: the oldest position an expired
   * `Last-Event-ID` may resume after becomes the stream's id for it (`oldest_event_id`), since an
   * agent never sees a position.
   */
  sealError(error: unknown, agentId: string, scope: StreamScope): unknown {
    if (!(error instanceof RelayError) || error.reason !== 'events_expired' || typeof error.data?.oldest_position !== 'string') return error;
    const { oldest_position: position, ...data } = error.data;
    return new RelayError(error.reason, error.message, { ...data, oldest_event_id: this.encode(position, agentId, scope) });
  }

  private tag(agentId: string, scope: StreamScope): Buffer {
    const name = scope === 'inbox' ? 'inbox' : `task:${scope.task.toUpperCase()}`;
    return createHmac('sha256', this.key).update(`${agentId}\0${name}`).digest().subarray(0, TAG_BYTES);
  }
}

/** RELAY_STREAM_ID_KEY; unset, one derived from RELAY_ADMIN_TOKEN (shared by the edges that share it), else a random one of this process. */
function streamIdKey(config: EdgeConfig, warnEphemeral: () => void): Buffer {
  if (config.RELAY_STREAM_ID_KEY !== undefined) return Buffer.from(config.RELAY_STREAM_ID_KEY, 'base64');
  if (config.RELAY_ADMIN_TOKEN !== undefined) return Buffer.from(hkdfSync('sha256', config.RELAY_ADMIN_TOKEN, Buffer.alloc(0), HKDF_INFO, 32));
  warnEphemeral();
  return randomBytes(32);
}
