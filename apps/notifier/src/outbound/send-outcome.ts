/** What one outbound request (a webhook, a push, a call to an upstream agent) came to, as the delivery worker records it and its breakers count it. */
export interface SendOutcome {
  /** 2xx. */
  ok: boolean;
  /** Worth another attempt: 429, 5xx, a timeout or a network error. */
  retryable: boolean;
  statusCode: number | null;
  /** What the receiver asked for with `Retry-After`, in ms. */
  retryAfterMs: number | null;
  error: string | null;
  durationMs: number;
}
