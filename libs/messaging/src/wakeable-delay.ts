/**
 * The pause of a polling loop between two rounds. `wake()` (new work arrived) cuts a wakeable
 * pause short, or makes the next wakeable pause return at once when none is running;
 * `interrupt()` (shutdown) ends any pause.
 */
export class WakeableDelay {
  private wakeRequested = false;
  private pending: { finish: () => void; wakeable: boolean } | null = null;

  wait(ms: number, wakeable = true): Promise<void> {
    if (wakeable && this.wakeRequested) {
      this.wakeRequested = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.pending = { finish, wakeable };
    }).then(() => {
      this.pending = null;
      this.wakeRequested = false;
    });
  }

  wake(): void {
    this.wakeRequested = true;
    if (this.pending?.wakeable) this.pending.finish();
  }

  interrupt(): void {
    this.pending?.finish();
  }
}
