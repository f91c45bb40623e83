import { ArgumentsHost, Catch, HttpException, Logger, ValidationPipe, type ExceptionFilter, type ValidationError } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import { httpStatusOf, RelayError, retryAfterSeconds, type AdminErrorBody, type FieldError } from '@app/contracts';
import { UnparseableYaml } from './agents/yaml-body';

/** Every violated constraint, with dotted paths for nested fields (`skills.0`). */
export function fieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const result: FieldError[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const messages = Object.values(error.constraints ?? {});
    if (messages.length > 0) result.push({ field, messages });
    result.push(...fieldErrors(error.children ?? [], field));
  }
  return result;
}

export function invalidBody(fields: FieldError[]): RelayError {
  const message = fields.map((entry) => `${entry.field}: ${entry.messages.join(', ')}`).join('; ') || 'Invalid request';
  return new RelayError('invalid_params', message, { fields, field: fields[0]?.field });
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** class-validator DTOs at the admin edge: unknown fields refused, every violation named. */
export class AdminValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors: ValidationError[]) => invalidBody(fieldErrors(errors)),
    });
  }

  override async transform(value: unknown, metadata: Parameters<ValidationPipe['transform']>[1]): Promise<unknown> {
    if (value instanceof UnparseableYaml) {
      const place = value.line !== undefined ? ` (line ${value.line}, column ${value.column})` : '';
      throw new RelayError('invalid_params', `Invalid YAML${place}: ${value.detail}`, {
        field: 'body',
        fields: [{ field: 'body', messages: [`invalid YAML: ${value.detail}`] }],
        ...(value.line !== undefined ? { line: value.line, column: value.column } : {}),
      });
    }
    if (metadata.type === 'body' && !isPlainObject(value ?? {})) {
      throw new RelayError('invalid_params', 'The body must be a JSON (or, for trust policies, YAML) object', {
        field: 'body',
        fields: [{ field: 'body', messages: ['must be an object'] }],
      });
    }
    return super.transform(value ?? {}, metadata);
  }
}

/** Renders the admin API's errors with their HTTP status; unknown errors become 500 with an id. */
@Catch()
export class AdminExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(AdminExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body } = this.render(exception);
    const retryAfter = exception instanceof RelayError ? retryAfterSeconds(exception) : undefined;
    if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  private render(exception: unknown): { status: number; body: AdminErrorBody } {
    if (exception instanceof RelayError) {
      const status = exception.reason === 'invalid_params' ? 400 : httpStatusOf(exception.reason) === 200 ? 400 : httpStatusOf(exception.reason);
      const { fields, ...data } = exception.data ?? {};
      return {
        status,
        body: {
          error: {
            reason: exception.reason,
            message: exception.message,
            ...(Array.isArray(fields) ? { fields: fields as FieldError[] } : {}),
            ...(Object.keys(data).length > 0 ? { data } : {}),
          },
        },
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      return { status, body: { error: { reason: status === 404 ? 'not_found' : 'http_error', message: exception.message } } };
    }
    const errorId = randomUUID();
    this.logger.error({ err: exception, error_id: errorId }, 'unhandled error in the admin API');
    return { status: 500, body: { error: { reason: 'internal_error', message: `Internal error (id ${errorId})`, data: { error_id: errorId } } } };
  }
}
