import type { LockAcquisitionEvent, LockWakeUps } from './lock-event.types.js';

/** Which bound ended a waiter's sleep between two attempts. */
export type WakeUpCause = keyof LockWakeUps;

/**
 * @internal What one acquisition did, counted while it runs and reported when it ends (granted, not
 * acquired, store unavailable): a handful of integer increments, so nobody pays for it who does not listen.
 */
export class AcquireTally {
  readonly startedAt = Date.now();
  attempts = 0;
  private notification = 0;
  private backoff = 0;
  private expiry = 0;
  private deadline = 0;

  constructor(
    readonly key: string,
    readonly name: string | undefined,
  ) {}

  wokenBy(cause: WakeUpCause): void {
    this[cause]++;
  }

  /** The fields every acquisition event carries, as of now. */
  report(): LockAcquisitionEvent {
    return {
      key: this.key,
      name: this.name,
      waitedMs: Date.now() - this.startedAt,
      attempts: this.attempts,
      wakeUps: { notification: this.notification, backoff: this.backoff, expiry: this.expiry, deadline: this.deadline },
    };
  }
}
