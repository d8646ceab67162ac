import type { QueuedWakeUpCause } from '../../lock-store.interface.js';

/**
 * When a waiter in line looks at the queue next, and why: reported with a grant the look finds
 * (`QueuedAcquireOutcome.grantedOn`), since a heartbeat look that finds the key handed over means the
 * hand-off's message never came. No cause for the catch-up looks after subscribing or a reconnection,
 * which no wake-up brought.
 */
export class NextLook {
  at = Infinity;
  cause?: QueuedWakeUpCause;

  constructor(private readonly heartbeatMs: number) {}

  /** The heartbeat look: three per heartbeat lease, so that the entry never runs out between two. */
  heartbeatAfter(sentAt: number): void {
    this.schedule(sentAt + Math.max(1, Math.floor(this.heartbeatMs / 3)), 'backoff');
  }

  schedule(at: number, cause: QueuedWakeUpCause | undefined): void {
    this.at = at;
    this.cause = cause;
  }

  /** Sooner only: a later time leaves the look as it was. */
  bringForward(at: number, cause: QueuedWakeUpCause | undefined): void {
    if (at < this.at) this.schedule(at, cause);
  }
}
