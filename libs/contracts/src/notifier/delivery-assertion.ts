/**
 * The assertion the relay signs into every delivery to an agent's webhook, an A2A push URL and an
 * upstream agent's A2A server: who asked (the handoff's sender) and on whose behalf (its chain's
 * root sender), for which agent (docs/chains.md#who-asked-signed). A JWT (ES256) a recipient
 * verifies against the edge's JWKS.
 */

/** The request header that carries it (an upstream's `Authorization` carries its own credential). */
export const DELIVERY_ASSERTION_HEADER = 'X-AgentRelay-Assertion';

/** Its JWT `typ` header, so that no other token the relay might sign passes for one. */
export const DELIVERY_ASSERTION_TYPE = 'agentrelay-assertion+jwt';

/** Where the edge publishes the keys assertions are signed with, under RELAY_PUBLIC_URL. */
export const DELIVERY_ASSERTION_JWKS_PATH = '/.well-known/jwks.json';

/** The claims of an assertion. */
export interface DeliveryAssertionClaims {
  /** The relay: its RELAY_PUBLIC_URL. */
  iss: string;
  /** The agent the delivery is for: the upstream agent, or the owner of the webhook or push config (`approvers` for the approvers' webhook). */
  aud: string;
  /** The handoff's sender. */
  sub: string;
  iat: number;
  exp: number;
  /** Unique per signature: each attempt of a delivery signs anew. */
  jti: string;
  /** The relay task (handoff) the delivery is about. */
  task_id: string;
  /** The delivery's event name, e.g. `a2a.task.created`. */
  event: string;
  /** The sender of the chain's root handoff: on whose behalf the chain runs (the sender itself on a root). Absent only for a handoff made before it was kept. */
  root_sender?: string;
  /** The chain's first handoff (the task itself on a root). */
  root_task_id: string;
  /** The handoff this one was made for, or null on a root. */
  parent_task_id: string | null;
  /** How deep the handoff sits below its root (the root: 0). */
  depth: number;
}
