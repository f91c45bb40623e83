import { registerDecorator, type ValidationOptions } from 'class-validator';
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
