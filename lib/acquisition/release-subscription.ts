import type { Wake } from '../support/wake.js';

/**
 * The release notifications one waiter listens to. Asked for once the key is found taken, without the wait
 * stopping for it (attempts go on by the backoff while it is not confirmed, so a slow subscriber connection
 * never holds a waiter back). Confirmed, it wakes the waiter once: the attempt right after catches a release
 * that came before the channel was live. Refused, it is asked for again when the waiter next wakes.
 */
export class ReleaseSubscription {
  private state: 'idle' | 'pending' | 'live' | 'refused' | 'closed' = 'idle';
  private stop?: () => void;
  private confirmed = false;

  constructor(
    private readonly subscribe: (listener: () => void) => Promise<() => void>,
    private readonly wake: Wake,
  ) {}

  /** Whether release notifications of the key reach the waiter now. */
  get live(): boolean {
    return this.state === 'live';
  }

  open(): void {
    if (this.state !== 'idle' && this.state !== 'refused') return;
    this.state = 'pending';
    this.subscribe(() => this.wake.fire()).then(
      (stop) => {
        if (this.state === 'closed') return stop();
        this.stop = stop;
        this.state = 'live';
        this.confirmed = true;
        this.wake.fire();
      },
      () => {
        if (this.state === 'pending') this.state = 'refused';
      },
    );
  }

  /** Asks again for a subscription that was refused; nothing otherwise. */
  reopenIfRefused(): void {
    if (this.state === 'refused') this.open();
  }

  /** True once after the subscription was confirmed: the wake-up it gave was the confirmation's. */
  takeConfirmation(): boolean {
    const confirmed = this.confirmed;
    this.confirmed = false;
    return confirmed;
  }

  /** Stops listening; a subscription confirmed later is undone at once. */
  close(): void {
    this.state = 'closed';
    this.stop?.();
    this.stop = undefined;
  }
}
