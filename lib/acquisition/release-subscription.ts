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
  /** A release notification came since the last wake-up was accounted for. */
  private released = false;
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
    const onRelease = (): void => {
      this.released = true;
      this.wake.fire();
    };
    this.subscribe(onRelease).then(
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
   * Called at each notified wake-up: true when the subscription's answer (confirmed or refused) was all that
   * woke the waiter. A release that came with it (the confirmation and the first message back to back on the
   * subscriber connection, both served by one wake-up) makes it the release's.
   */
  takeAnswer(): boolean {
    const answerOnly = this.answered && !this.released;
    this.answered = false;
    this.released = false;
    return answerOnly;
  }

  /** Stops listening; a subscription confirmed later is undone at once. */
  close(): void {
    this.state = 'closed';
    this.stop?.();
    this.stop = undefined;
  }
}
