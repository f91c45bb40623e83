import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigValidationError';
  }
}

function describeProblems(errors: ValidationError[]): string[] {
  return errors.map((error) => {
    const reasons = Object.values(error.constraints ?? {}).join('; ');
    return `${error.property}: ${reasons}`;
  });
}

/**
 * Reads an environment map once into a typed, validated config object. Unknown keys are
 * ignored; a missing or invalid value throws an error naming the key.
 */
export function loadConfig<T extends object>(configClass: new () => T, env: Record<string, string | undefined>): T {
  const defined = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const config = plainToInstance(configClass, defined, { enableImplicitConversion: true, exposeDefaultValues: true });
  const errors = validateSync(config, { whitelist: true, forbidUnknownValues: true });
  if (errors.length > 0) {
    throw new ConfigValidationError(describeProblems(errors));
  }
  return config;
}
