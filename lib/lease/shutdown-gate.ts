import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';

/** Why a wait ended at shutdown; turned into a `LockStoreUnavailableError` for the caller's key. */
const SHUTTING_DOWN = new Error('the application is shutting down');

/**
 * What a LockService needs to shut down without handing anything out unwatched: it stops new acquisitions,
 * cuts short the waits in progress, and knows when every acquisition in flight and every lease has settled.
 */
export class ShutdownGate {
  private closing = false;
  private inFlight = 0;
  private readonly waits = new Set<AbortController>();
  private drained?: () => void;

  constructor(private readonly heldLeases: () => number) {}

  get closed(): boolean {
    return this.closing;
  }

  /** The error an acquisition of `key` gets when the application is (or started) shutting down. */
  refusal(key: string): LockStoreUnavailableError {
    return new LockStoreUnavailableError('acquire', key, { cause: SHUTTING_DOWN });
  }

  isShutdownAbort(error: unknown): boolean {
    return this.closing && error === SHUTTING_DOWN;
  }

  /** Counts an acquisition from its first step to its last, so shutdown waits for it. */
  async track<T>(acquisition: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await acquisition();
    } finally {
      this.inFlight--;
      this.changed();
    }
  }

  /**
   * A signal for a waiting acquisition that aborts at shutdown (and when `signal` does). `done` must be
   * called when the wait is over.
   */
  waitSignal(signal: AbortSignal | undefined): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    const follow = (): void => controller.abort(signal!.reason);
    if (signal?.aborted) follow();
    else signal?.addEventListener('abort', follow, { once: true });
    this.waits.add(controller);
    return {
      signal: controller.signal,
      done: () => {
        signal?.removeEventListener('abort', follow);
        this.waits.delete(controller);
      },
    };
  }

  /** Called whenever a lease settles. */
  changed(): void {
    if (this.inFlight === 0 && this.heldLeases() === 0) this.drained?.();
  }

  /**
   * Stops new acquisitions, aborts the waits in progress, and resolves once nothing is in flight or held,
   * or after `graceMs`, whichever comes first.
   */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    for (const wait of this.waits) wait.abort(SHUTTING_DOWN);
    if (this.inFlight === 0 && this.heldLeases() === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
