/**
 * A new key pair for what the relay's services seal to the notifier over NATS: the notifier's
 * RELAY_NOTIFIER_SEALING_KEYS entry (keep it secret, the notifier's alone) and the public
 * RELAY_NOTIFIER_PUBLIC_KEY the edge, the directory and the tasks service seal to.
 *
 *   npm run notifier:sealing-key [-- <key id>]
 */
import 'reflect-metadata';
import { generateNotifierSealingKeyPair } from '@app/secrets';

const { sealingKey, publicKey } = generateNotifierSealingKeyPair(process.argv[2] ?? `k${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`);
console.log(`RELAY_NOTIFIER_SEALING_KEYS=${sealingKey}`);
console.log(`RELAY_NOTIFIER_PUBLIC_KEY=${publicKey}`);
