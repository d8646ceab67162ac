import type { ReleaseChannel } from './release-channel.js';

/** What the fair queue's scripts tell one waiter (see scripts/queue.lua.ts). */
export interface GrantListener {
  /** `g|waiter|fence`: the key was handed to it. */
  granted(fencingToken: number): void;
  /** `r|waiter|ms`: look at the queue again in `delayMs`. */
  recheck(delayMs: number): void;
}

interface SlotSubscription {
  readonly ready: Promise<void>;
  /** Set once the subscription is confirmed. */
  readyAt?: number;
  stop?: () => void;
  users: number;
  linger?: NodeJS.Timeout;
}

/**
 * How long a slot's grant channel stays subscribed after its last local waiter left: a key that is
 * contended now and then would otherwise pay a SUBSCRIBE and an UNSUBSCRIBE (and a look at the queue, for
 * a hand-off announced before the subscription) for every wait.
 */
const LINGER_MS = 60_000;

/**
 * The grant channels of one store instance: one per hash slot its waiters wait in (the channel carries the
 * slot's tag, so the scripts that announce on it stay within their slot), subscribed while a local waiter
 * of that slot waits and for a moment after. Messages name the waiter; only that one is told, so a release
 * wakes exactly one waiter, on exactly one instance.
 */
export class GrantChannel {
  private readonly waiters = new Map<string, GrantListener>();
  private readonly slots = new Map<string, SlotSubscription>();

  constructor(
    private readonly channel: ReleaseChannel,
    private readonly channelOf: (tag: string) => string,
  ) {}

  /** Messages for `waiter` go to `listener` from now on (registered before the waiter's first call). */
  register(waiter: string, listener: GrantListener): void {
    this.waiters.set(waiter, listener);
  }

  unregister(waiter: string): void {
    this.waiters.delete(waiter);
  }

  /**
   * Subscribes the slot's channel if needed (once per waiter that waits there; `unsubscribe` when done).
   * Resolves with the time the subscription was confirmed: a message sent before then may have been
   * missed. Rejects when the subscription fails.
   */
  subscribe(tag: string): Promise<number> {
    let slot = this.slots.get(tag);
    if (!slot) {
      const created: SlotSubscription = {
        users: 0,
        ready: this.channel.listen(this.channelOf(tag), (message) => this.deliver(message)).then(
          (stop) => {
            created.stop = stop;
            created.readyAt = Date.now();
            if (created.users === 0 && !created.linger) this.linger(tag, created);
          },
          (error: unknown) => {
            if (this.slots.get(tag) === created) this.slots.delete(tag);
            throw error;
          },
        ),
      };
      slot = created;
      this.slots.set(tag, slot);
    }
    slot.users++;
    clearTimeout(slot.linger);
    slot.linger = undefined;
    const subscribed = slot;
    return subscribed.readyAt !== undefined ? Promise.resolve(subscribed.readyAt) : subscribed.ready.then(() => subscribed.readyAt!);
  }

  unsubscribe(tag: string): void {
    const slot = this.slots.get(tag);
    if (!slot || --slot.users > 0) return;
    if (slot.stop) this.linger(tag, slot);
  }

  /** The subscriptions go with the subscriber connection; only the timers are ours to stop. */
  close(): void {
    for (const slot of this.slots.values()) clearTimeout(slot.linger);
    this.slots.clear();
    this.waiters.clear();
  }

  private linger(tag: string, slot: SlotSubscription): void {
    slot.linger = setTimeout(() => {
      if (slot.users > 0 || this.slots.get(tag) !== slot) return;
      this.slots.delete(tag);
      slot.stop?.();
    }, LINGER_MS);
    slot.linger.unref();
  }

  private deliver(message: string): void {
    const first = message.indexOf('|');
    const second = message.indexOf('|', first + 1);
    if (first !== 1 || second < 0) return;
    const listener = this.waiters.get(message.slice(2, second));
    if (!listener) return;
    const value = Number(message.slice(second + 1));
    if (message[0] === 'g') listener.granted(value);
    else if (message[0] === 'r') listener.recheck(value);
  }
}
