import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The AsyncLocalStorage of one application's scopes, given back (`disable()`) once the application has shut
 * down and no scope runs in it any more. On Node 20 and 22 an enabled storage costs every promise the
 * process makes, so closed applications must not leave theirs on; but a scope still running past the
 * shutdown grace period must go on seeing its lease (lost by then) rather than no lease at all.
 */
export class ScopeStorage<T> {
  private readonly storage = new AsyncLocalStorage<T>();
  private running = 0;
  private disposed = false;

  getStore(): T | undefined {
    return this.storage.getStore();
  }

  run<R, A extends unknown[]>(store: T, fn: (...args: A) => R, ...args: A): R {
    return this.storage.run(store, fn, ...args);
  }

  /** A scope starts: the storage stays on until it has ended (`leave`). */
  enter(): void {
    this.running++;
  }

  leave(): void {
    if (--this.running === 0 && this.disposed) this.storage.disable();
  }

  /** The application has shut down: the storage is given back now, or when its last scope ends. */
  dispose(): void {
    this.disposed = true;
    if (this.running === 0) this.storage.disable();
  }
}
