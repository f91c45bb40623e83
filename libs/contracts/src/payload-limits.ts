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
