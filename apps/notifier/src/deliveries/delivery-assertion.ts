import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { DELIVERY_ASSERTION_HEADER, DELIVERY_ASSERTION_TYPE, type DeliveryAssertionClaims, type TaskEvent } from '@app/contracts';
import { ASSERTION_ALG, parseAssertionSigningKey, type AssertionSigningKey } from '@app/secrets';

/**
 * What a delivery's assertion states beside its times, recorded with the delivery from its task
 * event: who asked (the handoff's sender) and where the handoff sits in its chain.
 */
export interface DeliveryAssertionFacts {
  sender: string;
  /** Null for a handoff linked before the root's sender was kept. */
  root_sender: string | null;
  root_task_id: string;
  parent_task_id: string | null;
  depth: number;
}

/** The facts of a task event (an event from before chains were kept is its own root). */
export function assertionFactsOf(event: TaskEvent): DeliveryAssertionFacts {
  const chain = event.chain;
  if (!chain) return { sender: event.sender, root_sender: event.sender, root_task_id: event.task_id, parent_task_id: null, depth: 0 };
  return {
    sender: event.sender,
    root_sender: chain.root_sender ?? (chain.depth === 0 ? event.sender : null),
    root_task_id: chain.root_task_id,
    parent_task_id: chain.parent_task_id,
    depth: chain.depth,
  };
}

/** The delivery an assertion is signed into: its task, event name, the agent it is for, and its recorded facts. */
export interface AssertedDelivery {
  task_id: string;
  event: string;
  target_handle: string;
  /** Null on Slack deliveries and on deliveries recorded before assertions were signed. */
  assertion: DeliveryAssertionFacts | null;
}

/**
 * Signs the assertion of each delivery attempt (docs/chains.md#who-asked-signed): an ES256 JWT
 * with the relay as issuer, the agent the delivery is for as audience, the handoff's sender as
 * subject, its chain's root sender, root, parent and depth, the task and the event; a fresh
 * `iat`, `exp` and `jti` every attempt, so a retry never carries an expired one.
 */
export class DeliveryAssertionSigner {
  private readonly key: AssertionSigningKey;

  constructor(
    signingKey: string,
    private readonly issuer: string,
    private readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.key = parseAssertionSigningKey(signingKey);
  }

  /** The id (`kid`) of the key it signs with. */
  get keyId(): string {
    return this.key.id;
  }

  async sign(delivery: AssertedDelivery & { assertion: DeliveryAssertionFacts }): Promise<string> {
    const facts = delivery.assertion;
    const claims: Omit<DeliveryAssertionClaims, 'iss' | 'aud' | 'sub' | 'iat' | 'exp' | 'jti'> = {
      task_id: delivery.task_id,
      event: delivery.event,
      ...(facts.root_sender !== null ? { root_sender: facts.root_sender } : {}),
      root_task_id: facts.root_task_id,
      parent_task_id: facts.parent_task_id,
      depth: facts.depth,
    };
    const issuedAt = Math.floor(this.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ASSERTION_ALG, typ: DELIVERY_ASSERTION_TYPE, kid: this.key.id })
      .setIssuer(this.issuer)
      .setAudience(delivery.target_handle)
      .setSubject(facts.sender)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.ttlSeconds)
      .setJti(randomUUID())
      .sign(this.key.key);
  }

  /** The identity headers of one attempt of a delivery: its signed assertion, or none for a delivery that records no facts. */
  async identityHeaders(delivery: AssertedDelivery): Promise<Record<string, string>> {
    if (!delivery.assertion) return {};
    return { [DELIVERY_ASSERTION_HEADER]: await this.sign({ ...delivery, assertion: delivery.assertion }) };
  }
}
