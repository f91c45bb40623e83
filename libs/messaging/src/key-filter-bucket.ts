import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { prefixScope } from './stream-names';
import type { NatsConnection } from '@nats-io/transport-node';
import { createHash } from 'node:crypto';
import { matchMaxBytes, matchReplicas } from './jetstream';

/**
 * What goes in front of a key's stored hash before the filter digest is taken: the bucket never
 * holds the directory's lookup values (`key_hash`), nor anything that finds a row by them.
 */
const KEY_FILTER_DOMAIN = 'agentrelay key filter v1\n';

/** Hex characters of a filter digest: 64 bits. */
export const KEY_FILTER_DIGEST_HEX = 16;

/**
 * The key-value bucket listing a digest of every live API key of one relay (or test run): named
 * after the subject prefix, like the streams, so runs never share one.
 */
export function keyFilterBucketName(subjectPrefix: string): string {
  const scope = prefixScope(subjectPrefix);
  return scope ? `RELAY_KEYS_${scope}` : 'RELAY_KEYS';
}

/** The filter digest of a key from its stored hash (lowercase hex SHA-256 of the key, as the directory keeps it). */
export function keyFilterDigest(keyHash: string): string {
  return createHash('sha256').update(KEY_FILTER_DOMAIN).update(keyHash, 'utf8').digest('hex').slice(0, KEY_FILTER_DIGEST_HEX);
}

/** The filter digest of a key itself (what an edge computes from a presented key). */
export function keyFilterDigestOfKey(apiKey: string): string {
  return keyFilterDigest(createHash('sha256').update(apiKey, 'utf8').digest('hex'));
}

/**
 * Opens the key filter bucket. The directory creates it (file storage, one value per key: its
 * history is 1); edges only bind to it, and fail while it does not exist.
 */
export async function openKeyFilterBucket(
  connection: NatsConnection,
  subjectPrefix: string,
  options: { create: boolean; timeoutMs: number; replicas?: number; maxBytes?: number },
): Promise<KV> {
  const kvm = new Kvm(connection);
  const name = keyFilterBucketName(subjectPrefix);
  if (!options.create) return kvm.open(name, { bindOnly: true, timeout: options.timeoutMs });
  const bucket = await kvm.create(name, {
    history: 1,
    storage: StorageType.File,
    timeout: options.timeoutMs,
    ...(options.replicas ? { replicas: options.replicas } : {}),
    ...(options.maxBytes ? { max_bytes: options.maxBytes } : {}),
  });
  if (options.replicas !== undefined || options.maxBytes !== undefined) {
    // A bucket made before RELAY_JETSTREAM_REPLICAS (or RELAY_STATE_STREAM_MAX_BYTES) changed keeps its settings: its stream is changed like the others.
    const jsm = await jetstreamManager(connection, { timeout: options.timeoutMs });
    await matchReplicas(jsm, await matchMaxBytes(jsm, await jsm.streams.info(`KV_${name}`), options.maxBytes), options.replicas);
  }
  return bucket;
}
