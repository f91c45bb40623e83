/** Exit codes of the `agentrelay` command. */
export const EXIT = { ok: 0, apiError: 1, usage: 2, unreachable: 3, unauthorized: 4, notFound: 5, conflict: 6 } as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** The last line of a usage error; the CLI names the command the person typed in its place. */
export const USAGE_HINT = 'Run "agentrelay --help" for usage.';

export const usage = (message: string): CliError => new CliError(`${message}\n${USAGE_HINT}`, EXIT.usage);
