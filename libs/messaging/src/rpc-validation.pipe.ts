import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { RelayError } from '@app/contracts';

function firstViolation(errors: ValidationError[], parent = ''): { field: string; description: string } | undefined {
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const constraints = Object.values(error.constraints ?? {});
    if (constraints.length > 0) return { field, description: constraints[0] };
    const nested = firstViolation(error.children ?? [], field);
    if (nested) return nested;
  }
  return undefined;
}

/** Validates NATS payloads against their contract classes; a violation is an `invalid_params` RelayError. */
export class RpcValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors: ValidationError[]) => {
        const violation = firstViolation(errors);
        const message = violation ? `${violation.field}: ${violation.description}` : 'Invalid parameters';
        return new RelayError('invalid_params', message, violation ? { field: violation.field } : undefined);
      },
    });
  }
}
