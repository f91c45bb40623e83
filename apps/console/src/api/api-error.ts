import type { ApiErrorBody } from './types';

/** An admin API answer other than 2xx, with the error body's reason, message and data. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly data: Record<string, unknown> = {},
    readonly fields: Array<{ field: string; messages: string[] }> = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  static async from(response: Response): Promise<ApiError> {
    const body = (await response.json().catch(() => null)) as ApiErrorBody | null;
    const error = body?.error;
    return new ApiError(
      response.status,
      error?.reason ?? 'http_error',
      error?.message ?? `${response.status} ${response.statusText}`,
      error?.data,
      error?.fields,
    );
  }

  /** Where a YAML or validation error sits, when the API named it (1-based). */
  get place(): { line: number; column: number } | null {
    const { line, column } = this.data;
    return typeof line === 'number' ? { line, column: typeof column === 'number' ? column : 1 } : null;
  }
}
