import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;

/**
 * Random bytes for ids (task ids, trace and span ids), drawn from the system's generator 4 KiB at
 * a time and handed out once each, as Node's `randomUUID` does: an id then costs a copy, not a
 * call into the generator per byte or per id. Not for secrets: the pool stays in memory until
 * it is drawn again.
 */
class RandomPool {
  private readonly pool = Buffer.allocUnsafeSlow(POOL_BYTES);
  private offset = POOL_BYTES;

  hex(bytes: number): string {
    this.reserve(bytes);
    const value = this.pool.toString('hex', this.offset, this.offset + bytes);
    this.offset += bytes;
    return value;
  }

  byte(): number {
    this.reserve(1);
    return this.pool[this.offset++];
  }

  private reserve(bytes: number): void {
    if (!Number.isInteger(bytes) || bytes < 1 || bytes > POOL_BYTES) throw new RangeError(`Between 1 and ${POOL_BYTES} random bytes at a time, not ${bytes}`);
    if (this.offset + bytes <= POOL_BYTES) return;
    randomFillSync(this.pool);
    this.offset = 0;
  }
}

const ids = new RandomPool();

/** `bytes` random bytes as lowercase hex, for an id. */
export function randomIdHex(bytes: number): string {
  return ids.hex(bytes);
}

/**
 * A random fraction in [0, 1) in steps of 1/256: what an id generator that picks one character of
 * an alphabet of up to 256 at a time takes (a ULID's 32 letters are then equally likely).
 */
export function randomIdFraction(): number {
  return ids.byte() / 256;
}
