import {
  generateNotifierSealingKeyPair,
  notifierPublicKeyOf,
  NotifierSealer,
  NotifierSealingKeyError,
  NotifierUnsealer,
  NotifierUnsealError,
  parseNotifierPublicKey,
  parseNotifierSealingKeys,
} from './notifier-sealing';

describe('sealing to the notifier', () => {
  const current = generateNotifierSealingKeyPair('current');
  const previous = generateNotifierSealingKeyPair('previous');

  it('opens what was sealed to its first or any other listed key, and nothing in clear appears in the sealed value', async () => {
    const unsealer = new NotifierUnsealer(`${current.sealingKey},${previous.sealingKey}`);
    const sealed = await new NotifierSealer(current.publicKey).seal('ak_live_secret-value');
    expect(sealed).not.toContain('ak_live_secret-value');
    expect(sealed.split('.')).toHaveLength(5);
    await expect(unsealer.open(sealed)).resolves.toBe('ak_live_secret-value');
    await expect(unsealer.open(await new NotifierSealer(previous.publicKey).seal('older'))).resolves.toBe('older');
  });

  it('seals each value anew (a fresh ephemeral key each time)', async () => {
    const sealer = new NotifierSealer(current.publicKey);
    expect(await sealer.seal('same')).not.toBe(await sealer.seal('same'));
  });

  it('refuses a value sealed to a key it does not list, altered, or not sealed at all', async () => {
    const unsealer = new NotifierUnsealer(current.sealingKey);
    await expect(unsealer.open(await new NotifierSealer(previous.publicKey).seal('x'))).rejects.toThrow(/not listed \(previous\)/);
    // A key with the listed id but other bytes (a public key the notifier does not hold).
    const impostor = generateNotifierSealingKeyPair('current');
    await expect(unsealer.open(await new NotifierSealer(impostor.publicKey).seal('x'))).rejects.toThrow(NotifierUnsealError);
    const sealed = await new NotifierSealer(current.publicKey).seal('x');
    const parts = sealed.split('.');
    parts[3] = parts[3].startsWith('A') ? `B${parts[3].slice(1)}` : `A${parts[3].slice(1)}`;
    await expect(unsealer.open(parts.join('.'))).rejects.toThrow(NotifierUnsealError);
    await expect(unsealer.open('plain-secret')).rejects.toThrow(/not a compact JWE/);
  });

  it('derives the public key from the sealing key, and names what is wrong in a key list without quoting it', () => {
    expect(notifierPublicKeyOf(current.sealingKey)).toBe(current.publicKey);
    expect(() => parseNotifierSealingKeys('')).toThrow(NotifierSealingKeyError);
    expect(() => parseNotifierSealingKeys('k:c2hvcnQ')).toThrow('RELAY_NOTIFIER_SEALING_KEYS key "k" must be 32 bytes');
    expect(() => parseNotifierSealingKeys(`${current.sealingKey},${current.sealingKey}`)).toThrow(/names key "current" twice/);
    expect(() => parseNotifierPublicKey('nokey')).toThrow(/entry 1 needs an id/);
    try {
      parseNotifierSealingKeys('k:c2hvcnQ');
    } catch (error) {
      expect((error as Error).message).not.toContain('c2hvcnQ');
    }
  });
});
