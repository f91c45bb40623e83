import { Inject, Injectable } from '@nestjs/common';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import { RelayError } from '@app/contracts';
import { NotifierUnsealer, NotifierUnsealError } from '@app/secrets';

function messagesOf(errors: ValidationError[], path: string): string[] {
  return errors.flatMap((error) => {
    const field = `${path}.${error.property}`;
    return [...Object.values(error.constraints ?? {}).map((message) => `${field}: ${message}`), ...messagesOf(error.children ?? [], field)];
  });
}

/** Opens the secrets that reach the notifier sealed to its key (decision 0026), and checks what they hold. */
@Injectable()
export class SealedRequests {
  constructor(@Inject(NotifierUnsealer) private readonly unsealer: NotifierUnsealer) {}

  /** A sealed secret; `invalid_params` naming `field` when it is not sealed to one of the notifier's keys. */
  async secret(sealed: string, field: string): Promise<string> {
    try {
      return await this.unsealer.open(sealed);
    } catch (error) {
      if (error instanceof NotifierUnsealError) throw new RelayError('invalid_params', `${field}: ${error.message}`, { field });
      throw error;
    }
  }

  /** Sealed JSON of `type`'s fields, checked by its rules (nothing else allowed). */
  async fields<T extends object>(type: ClassConstructor<T>, sealed: string, field: string): Promise<T> {
    let json: unknown;
    try {
      json = JSON.parse(await this.secret(sealed, field));
    } catch (error) {
      if (error instanceof RelayError) throw error;
      throw new RelayError('invalid_params', `${field}: the sealed value is not JSON`, { field });
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw new RelayError('invalid_params', `${field}: the sealed value must be a JSON object`, { field });
    }
    const value = plainToInstance(type, json);
    const problems = messagesOf(await validate(value, { whitelist: true, forbidNonWhitelisted: true }), field);
    if (problems.length > 0) throw new RelayError('invalid_params', problems.join('; '), { field });
    return value;
  }
}
