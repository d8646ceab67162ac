import { setMaxListeners } from 'node:events';
import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';
import { followSignals } from '../support/follow-signals.js';

const ignore = (): void => undefined;

/** Why a wait ended at shutdown; turned into a `LockStoreUnavailableError` for the caller's key. */
const SHUTTING_DOWN = new Error('the application is shutting down');

/**
 * What a LockService needs to shut down without handing anything out unwatched: it stops new acquisitions,
 * cuts short the waits in progress, and knows when every acquisition in flight and every lease has settled.
 */
export class ShutdownGate {
  private closing = false;
  private inFlight = 0;
  /** Aborts every wait at shutdown; waits that bring a signal of their own follow it too. */
  private readonly shutdown = new AbortController();
  private drained?: () => void;
  private readonly sharedWait = { signal: this.shutdown.signal, done: ignore };

  constructor(private readonly heldLeases: () => number) {
    // Every wait in progress listens here until it ends: as many listeners as concurrent waiters, each
    // removed with its wait, so Node's "possible leak" warning past 10 would only be noise.
    setMaxListeners(0, this.shutdown.signal);
  }

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

  /** An acquisition starts: shutdown waits for it to finish (`leave`). */
  enter(): void {
    this.inFlight++;
  }

  leave(): void {
    this.inFlight--;
    this.changed();
  }

  /**
   * A signal for a waiting acquisition that aborts at shutdown (and when `signal` does). Without a signal
   * of the caller's, all waits share one, so the common case allocates nothing. `done` must be called when
   * the wait is over.
   */
  waitSignal(signal: AbortSignal | undefined): { signal: AbortSignal; done: () => void } {
    if (!signal) return this.sharedWait;
    const { signal: both, stop } = followSignals(signal, this.shutdown.signal);
    return { signal: both, done: stop };
  }

  /** Whenever an acquisition ends or a lease settles: shutdown may go on once nothing is left. */
  changed(): void {
    if (this.inFlight === 0 && this.heldLeases() === 0) this.drained?.();
  }

  /**
   * Stops new acquisitions, aborts the waits in progress, and resolves once nothing is in flight or held,
   * or after `graceMs`, whichever comes first.
   */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    this.shutdown.abort(SHUTTING_DOWN);
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
