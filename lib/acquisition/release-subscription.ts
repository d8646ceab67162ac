import type { Wake } from '../support/wake.js';

/**
 * The release notifications one waiter listens to. Asked for once the key is found taken, without the wait
 * stopping for it. Confirmed, it wakes the waiter once: the attempt right after catches a release that came
 * before the channel was live, so a waiter whose subscription is still on its way needs no fast polling
 * either (a subscriber connection coming up on a loaded box took longer than the first backoff steps, and
 * those wake-ups read as "notifications missing"). Refused, it wakes the waiter, which then polls by the
 * backoff and asks for it again at each wake-up.
 */
export class ReleaseSubscription {
  private state: 'idle' | 'pending' | 'live' | 'refused' | 'closed' = 'idle';
  private stop?: () => void;
  private answered = false;
  /** Asked for again after a refusal, it is not counted on until confirmed: the waiter polls meanwhile. */
  private refusedOnce = false;

  constructor(
    private readonly subscribe: (listener: () => void) => Promise<() => void>,
    private readonly wake: Wake,
  ) {}

  /**
   * Whether a release of the key wakes the waiter: the channel is live, or its confirmation (after which
   * the waiter attempts at once) is still to come.
   */
  get listening(): boolean {
    return this.state === 'live' || (this.state === 'pending' && !this.refusedOnce);
  }

  open(): void {
    if (this.state !== 'idle' && this.state !== 'refused') return;
    this.state = 'pending';
    this.subscribe(() => this.wake.fire()).then(
      (stop) => {
        if (this.state === 'closed') return stop();
        this.stop = stop;
        this.state = 'live';
        this.answered = true;
        this.wake.fire();
      },
      () => {
        if (this.state !== 'pending') return;
        this.state = 'refused';
        if (this.refusedOnce) return;
        this.refusedOnce = true;
        // The waiter may be in a safety-net sleep counted on this subscription: it polls from now on.
        this.answered = true;
        this.wake.fire();
      },
    );
  }

  /** Asks again for a subscription that was refused; nothing otherwise. */
  reopenIfRefused(): void {
    if (this.state === 'refused') this.open();
  }

  /**
   * True once after the subscription was confirmed or refused: the wake-up it gave was that answer's, not a
   * release's.
   */
  takeAnswer(): boolean {
    const answered = this.answered;
    this.answered = false;
    return answered;
  }

  /** Stops listening; a subscription confirmed later is undone at once. */
  close(): void {
    this.state = 'closed';
    this.stop?.();
    this.stop = undefined;
  }
}
