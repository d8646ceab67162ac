/** Bounds the memory of {@link ContendedKeys}. */
const MAX_CONTENDED_KEYS = 1_000;

/**
 * Lock keys this store instance last found queued for, most recent last: a waiter for one of them joins with
 * a plain `RPUSHX` (one command instead of a script call that runs it), and only when no queue turns out to
 * be there makes the full attempt. A key last seen free is taken off. Shared by every waiter of the store.
 */
export class ContendedKeys {
  private readonly keys = new Map<string, true>();

  has(lockKey: string): boolean {
    return this.keys.has(lockKey);
  }

  note(lockKey: string, contended: boolean): void {
    if (!contended) {
      if (this.keys.size > 0) this.keys.delete(lockKey);
      return;
    }
    this.keys.delete(lockKey);
    this.keys.set(lockKey, true);
    if (this.keys.size > MAX_CONTENDED_KEYS) this.keys.delete(this.keys.keys().next().value!);
  }
}
