import { RelayError } from './errors';
import type { MessageInput } from './tasks/tasks.contract';

/**
 * How large a request may be, end to end. A send request carries the client's whole message over
 * NATS, so the edge reads at most what fits one NATS message once wrapped for the tasks service.
 */
export const PAYLOAD_LIMITS = {
  /** The largest JSON-RPC request body the edge reads (1 MiB) when the NATS server allows it. */
  requestBodyBytes: 1024 * 1024,
  /** What an internal request adds around the client's content: caller and recipient, the packet envelope, headers. */
  internalEnvelopeBytes: 64 * 1024,
} as const;

/** The NATS `max_payload` at which the edge reads whole 1 MiB bodies (NATS's default is 1 MiB). */
export const NATS_MAX_PAYLOAD_FOR_FULL_BODY = PAYLOAD_LIMITS.requestBodyBytes + PAYLOAD_LIMITS.internalEnvelopeBytes;

/** The body limit of the JSON-RPC endpoints under a NATS server with this `max_payload`. */
export function requestBodyLimit(natsMaxPayload: number): number {
  return Math.max(0, Math.min(PAYLOAD_LIMITS.requestBodyBytes, natsMaxPayload - PAYLOAD_LIMITS.internalEnvelopeBytes));
}

/**
 * The bytes a message takes in a reply that carries it: its parts and payload, and its first text
 * part twice more (as the message's body and as the summary of the task it starts).
 */
export function messageReplyBytes(message: MessageInput): number {
  const firstText = message.parts.find((part) => part.kind === 'text')?.text ?? '';
  return Buffer.byteLength(JSON.stringify(message)) + 2 * Buffer.byteLength(JSON.stringify(firstText));
}

/**
 * Refuses (413) a message that a reply of the tasks service could not carry under this NATS
 * `max_payload`: it would be stored, and every answer about it would then time out.
 */
export function assertMessageFitsReplies(message: MessageInput, natsMaxPayload: number, field = 'message'): void {
  const limit = natsMaxPayload - PAYLOAD_LIMITS.internalEnvelopeBytes;
  const bytes = messageReplyBytes(message);
  if (bytes <= limit) return;
  throw new RelayError(
    'payload_too_large',
    `${field} is too large for the relay: its parts and metadata, with its first text part repeated as the message body and the task summary, come to ${bytes} bytes, at most ${limit}`,
    { field, limit_bytes: limit },
  );
}
