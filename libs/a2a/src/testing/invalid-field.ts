import { RelayError } from '@app/contracts';

/** Runs a parser expected to refuse its input; returns the field its invalid_params error names. */
export function invalidFieldOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RelayError);
    expect((error as RelayError).reason).toBe('invalid_params');
    return (error as RelayError).data?.field as string;
  }
  throw new Error('expected invalid_params');
}
