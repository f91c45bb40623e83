import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { DELIVERY_ASSERTION_HEADER, DELIVERY_ASSERTION_TYPE, type TaskEvent } from '@app/contracts';
import { assertionJwks, generateAssertionKeyPair, parseAssertionPublicKeys } from '@app/secrets';
import { assertionFactsOf, DeliveryAssertionSigner, type AssertedDelivery } from './delivery-assertion';

const ISSUER = 'https://relay.acme.test';

const delivery: AssertedDelivery = {
  task_id: '01JCAROL0000000000000000000',
  event: 'a2a.task.created',
  target_handle: 'carol@acme',
  assertion: {
    sender: 'bob@acme',
    root_sender: 'alice@acme',
    root_task_id: '01JROOT00000000000000000000',
    parent_task_id: '01JROOT00000000000000000000',
    depth: 1,
  },
};

function jwksOf(...publicKeys: string[]) {
  return createLocalJWKSet(assertionJwks(parseAssertionPublicKeys(publicKeys.join(','))));
}

describe('DeliveryAssertionSigner', () => {
  const current = generateAssertionKeyPair('current');

  it('signs who asked for whom: issuer, audience, subject, the chain and the task, for the configured lifetime', async () => {
    const signer = new DeliveryAssertionSigner(current.signingKey, ISSUER, 300);
    const { [DELIVERY_ASSERTION_HEADER]: token } = await signer.identityHeaders(delivery);
    const { payload, protectedHeader } = await jwtVerify(token, jwksOf(current.publicKey), {
      issuer: ISSUER,
      audience: 'carol@acme',
      typ: DELIVERY_ASSERTION_TYPE,
      algorithms: ['ES256'],
    });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: DELIVERY_ASSERTION_TYPE, kid: 'current' });
    expect(payload).toMatchObject({
      iss: ISSUER,
      aud: 'carol@acme',
      sub: 'bob@acme',
      task_id: delivery.task_id,
      event: 'a2a.task.created',
      root_sender: 'alice@acme',
      root_task_id: '01JROOT00000000000000000000',
      parent_task_id: '01JROOT00000000000000000000',
      depth: 1,
    });
    expect((payload.exp as number) - (payload.iat as number)).toBe(300);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('signs anew for every attempt: a fresh jti and times', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const signer = new DeliveryAssertionSigner(current.signingKey, ISSUER, 60, () => now);
    const first = await signer.sign({ ...delivery, assertion: delivery.assertion! });
    now += 3_600_000;
    const retry = await signer.sign({ ...delivery, assertion: delivery.assertion! });
    const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { iat: number; exp: number; jti: string };
    expect(claims(retry).iat - claims(first).iat).toBe(3600);
    expect(claims(retry).exp).toBe(claims(retry).iat + 60);
    expect(claims(retry).jti).not.toBe(claims(first).jti);
  });

  it('is refused by a verifier for another audience, past its expiry, or signed with a key the relay does not publish', async () => {
    const signedAt = Date.now() - 10 * 60_000;
    const stale = await new DeliveryAssertionSigner(current.signingKey, ISSUER, 60, () => signedAt).sign({ ...delivery, assertion: delivery.assertion! });
    await expect(jwtVerify(stale, jwksOf(current.publicKey), { issuer: ISSUER, audience: 'carol@acme' })).rejects.toBeInstanceOf(errors.JWTExpired);
    const fresh = await new DeliveryAssertionSigner(current.signingKey, ISSUER, 60).sign({ ...delivery, assertion: delivery.assertion! });
    await expect(jwtVerify(fresh, jwksOf(current.publicKey), { issuer: ISSUER, audience: 'dave@acme' })).rejects.toBeInstanceOf(
      errors.JWTClaimValidationFailed,
    );
    await expect(jwtVerify(fresh, jwksOf(current.publicKey), { issuer: 'https://other.test', audience: 'carol@acme' })).rejects.toBeInstanceOf(
      errors.JWTClaimValidationFailed,
    );
    // A key with the published id but other bytes: the signature does not verify.
    const impostor = generateAssertionKeyPair('current');
    const forged = await new DeliveryAssertionSigner(impostor.signingKey, ISSUER, 60).sign({ ...delivery, assertion: delivery.assertion! });
    expect(decodeProtectedHeader(forged).kid).toBe('current');
    await expect(jwtVerify(forged, jwksOf(current.publicKey), { issuer: ISSUER, audience: 'carol@acme' })).rejects.toBeInstanceOf(
      errors.JWSSignatureVerificationFailed,
    );
  });

  it('verifies with the next key once it is published beside the last one (a rotation)', async () => {
    const next = generateAssertionKeyPair('next');
    const during = jwksOf(current.publicKey, next.publicKey);
    for (const key of [current, next]) {
      const token = await new DeliveryAssertionSigner(key.signingKey, ISSUER, 60).sign({ ...delivery, assertion: delivery.assertion! });
      await expect(jwtVerify(token, during, { issuer: ISSUER, audience: 'carol@acme' })).resolves.toMatchObject({
        protectedHeader: { kid: key.signingKey.split(':')[0] },
      });
    }
  });

  it('adds no header to a delivery that records no facts (Slack, or recorded before assertions)', async () => {
    await expect(new DeliveryAssertionSigner(current.signingKey, ISSUER, 60).identityHeaders({ ...delivery, assertion: null })).resolves.toEqual({});
  });
});

describe('assertionFactsOf', () => {
  const event = { task_id: '01JT', sender: 'bob@acme' } as TaskEvent;

  it("reads the sender and the event's chain; a root is its own root, sent by its sender", () => {
    expect(assertionFactsOf({ ...event, chain: { parent_task_id: '01JP', root_task_id: '01JR', depth: 2, root_sender: 'alice@acme' } })).toEqual({
      sender: 'bob@acme',
      root_sender: 'alice@acme',
      root_task_id: '01JR',
      parent_task_id: '01JP',
      depth: 2,
    });
    expect(assertionFactsOf({ ...event, chain: { parent_task_id: null, root_task_id: '01JT', depth: 0 } })).toMatchObject({
      root_sender: 'bob@acme',
      depth: 0,
    });
    expect(assertionFactsOf(event)).toEqual({ sender: 'bob@acme', root_sender: 'bob@acme', root_task_id: '01JT', parent_task_id: null, depth: 0 });
  });

  it('leaves the root sender unknown for a linked handoff whose event does not carry it', () => {
    expect(assertionFactsOf({ ...event, chain: { parent_task_id: '01JP', root_task_id: '01JR', depth: 1 } }).root_sender).toBeNull();
  });
});
