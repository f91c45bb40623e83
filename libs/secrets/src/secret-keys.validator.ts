import { registerDecorator, type ValidationOptions } from 'class-validator';
import { AssertionKeyError, parseAssertionPublicKeys, parseAssertionSigningKey } from './delivery-assertion-keys';
import { NotifierSealingKeyError, parseNotifierPublicKey, parseNotifierSealingKeys } from './notifier-sealing';
import { parseSecretKeys, SecretKeyError } from './secret-cipher';

/** Validates a `RELAY_SECRET_KEYS` value at boot; the message names the problem, never the key. */
export function IsSecretKeyList(options: ValidationOptions = {}): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    let problem = 'RELAY_SECRET_KEYS must be a comma-separated list of id:base64key (32-byte keys)';
    registerDecorator({
      name: 'isSecretKeyList',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { ...options, message: () => problem },
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'string') {
            problem = 'RELAY_SECRET_KEYS is required: a comma-separated list of id:base64key (32-byte keys, e.g. main:$(openssl rand -base64 32))';
            return false;
          }
          try {
            parseSecretKeys(value);
            return true;
          } catch (error) {
            if (!(error instanceof SecretKeyError)) throw error;
            problem = error.message;
            return false;
          }
        },
      },
    });
  };
}

function keyValidator(name: string, required: string, parse: (value: string) => unknown): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    let problem = required;
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: () => problem },
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'string') {
            problem = required;
            return false;
          }
          try {
            parse(value);
            return true;
          } catch (error) {
            if (!(error instanceof NotifierSealingKeyError || error instanceof AssertionKeyError)) throw error;
            problem = error.message;
            return false;
          }
        },
      },
    });
  };
}

/** Validates the notifier's `RELAY_NOTIFIER_SEALING_KEYS` at boot; the message never quotes a key. */
export function IsNotifierSealingKeys(): PropertyDecorator {
  return keyValidator(
    'isNotifierSealingKeys',
    'RELAY_NOTIFIER_SEALING_KEYS is required: id:base64url X25519 private keys, comma-separated (npm run notifier:sealing-key)',
    parseNotifierSealingKeys,
  );
}

/** Validates `RELAY_NOTIFIER_PUBLIC_KEY` (edge, directory, tasks) at boot. */
export function IsNotifierPublicKey(): PropertyDecorator {
  return keyValidator(
    'isNotifierPublicKey',
    "RELAY_NOTIFIER_PUBLIC_KEY is required: id:base64url, the public half of the notifier's first RELAY_NOTIFIER_SEALING_KEYS entry",
    parseNotifierPublicKey,
  );
}

/** Validates the notifier's `RELAY_ASSERTION_SIGNING_KEY` at boot; the message never quotes the key. */
export function IsAssertionSigningKey(): PropertyDecorator {
  return keyValidator(
    'isAssertionSigningKey',
    'RELAY_ASSERTION_SIGNING_KEY is required: id:base64url, the P-256 key the notifier signs delivery assertions with (npm run assertion:signing-key)',
    parseAssertionSigningKey,
  );
}

/** Validates the edge's `RELAY_ASSERTION_PUBLIC_KEYS` at boot. */
export function IsAssertionPublicKeys(): PropertyDecorator {
  return keyValidator(
    'isAssertionPublicKeys',
    'RELAY_ASSERTION_PUBLIC_KEYS is required: id:base64url P-256 public keys, comma-separated, the one RELAY_ASSERTION_SIGNING_KEY signs with among them',
    parseAssertionPublicKeys,
  );
}
