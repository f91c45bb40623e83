/** Polls `probe` until it stops throwing (or returns true), failing after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T> | T, timeoutMs = 10000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const result = await probe();
      if (result !== false) return result;
      lastError = new Error('condition still false');
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw lastError;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
