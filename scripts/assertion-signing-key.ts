/**
 * A new key for the assertions the relay signs into its deliveries: the notifier's
 * RELAY_ASSERTION_SIGNING_KEY (keep it secret, the notifier's alone) and the entry to add to the
 * edge's RELAY_ASSERTION_PUBLIC_KEYS, which it publishes at /.well-known/jwks.json. Publish it
 * before the notifier signs with it (docs/operations.md#delivery-assertion-keys).
 *
 *   npm run assertion:signing-key [-- <key id>]
 */
import 'reflect-metadata';
import { generateAssertionKeyPair } from '@app/secrets';

const { signingKey, publicKey } = generateAssertionKeyPair(process.argv[2] ?? `a${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`);
console.log(`RELAY_ASSERTION_SIGNING_KEY=${signingKey}`);
console.log(`RELAY_ASSERTION_PUBLIC_KEYS=${publicKey}`);
