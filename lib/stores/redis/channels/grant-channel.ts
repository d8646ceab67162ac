import type { ReleaseChannel } from './release-channel.js';

/** What the fair queue's scripts tell one waiter (see scripts/queue.lua.ts). */
export interface GrantListener {
  /**
   * `g|waiter|fence|proof`: the key was handed to it, if `proof` (see scripts/queue.lua.ts `grantProof`)
   * says the store sent it. The channel takes anybody's messages: the listener checks before it counts.
   */
  granted(fencingToken: number, proof: string): void;
  /** `r|waiter|ms`: look at the queue again in `delayMs`. */
  recheck(delayMs: number): void;
}

/** One waiter's use of a slot's grant channel (see `GrantChannel.subscribe`). */
export interface GrantSubscription {
  readonly ready: Promise<number>;
  unsubscribe(): void;
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

/** Messages kept for waiters not registered yet: more than the hand-offs of one reply's round trip. */
const UNCLAIMED_KEPT = 64;

/**
 * The grant channels of one store instance: one per hash slot its waiters wait in (the channel carries the
 * slot's tag, so the scripts that announce on it stay within their slot), subscribed while a local waiter
 * of that slot waits and for a moment after. Messages name the waiter; only that one is told, so a release
 * wakes exactly one waiter, on exactly one instance.
 */
export class GrantChannel {
  private readonly waiters = new Map<number, GrantListener>();
  /** The last messages nobody was registered for: a waiter registering late finds its own here. */
  private readonly unclaimed: Array<{ waiter: number; kind: string; value: number; proof: string } | undefined> = new Array(UNCLAIMED_KEPT);
  private nextUnclaimed = 0;
  private readonly slots = new Map<string, SlotSubscription>();

  constructor(
    private readonly channel: Pick<ReleaseChannel, 'listen'>,
    private readonly channelOf: (tag: string) => string,
  ) {}

  /**
   * Messages for `waiter` go to `listener` from now on, and those that came for it before (the key can be
   * handed over before the reply that put the waiter in line arrives) are delivered at once. A waiter
   * registers only once it stands in line, so an uncontended acquisition costs the registry nothing.
   */
  register(waiter: number, listener: GrantListener): void {
    this.waiters.set(waiter, listener);
    for (let i = 0; i < this.unclaimed.length; i++) {
      const message = this.unclaimed[i];
      if (message?.waiter !== waiter) continue;
      this.unclaimed[i] = undefined;
      this.tell(listener, message.kind, message.value, message.proof);
    }
  }

  unregister(waiter: number): void {
    this.waiters.delete(waiter);
  }

  /**
   * Subscribes the slot's channel if needed (once per waiter that waits there; `unsubscribe` the handle
   * when done). `ready` resolves with the time the subscription was confirmed (a message sent before then
   * may have been missed) and rejects when the subscription fails. The handle counts only against its own
   * subscription: after a failed one, a waiter leaving never takes a later waiter's subscription away.
   */
  subscribe(tag: string): GrantSubscription {
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
    let left = false;
    return {
      ready: subscribed.readyAt !== undefined ? Promise.resolve(subscribed.readyAt) : subscribed.ready.then(() => subscribed.readyAt!),
      unsubscribe: () => {
        if (left) return;
        left = true;
        if (--subscribed.users > 0) return;
        if (subscribed.stop && this.slots.get(tag) === subscribed) this.linger(tag, subscribed);
      },
    };
  }

  /** The subscriptions go with the subscriber connection; only the timers are ours to stop. */
  close(): void {
    for (const slot of this.slots.values()) clearTimeout(slot.linger);
    this.slots.clear();
    this.waiters.clear();
    this.unclaimed.fill(undefined);
  }

  private linger(tag: string, slot: SlotSubscription): void {
    slot.linger = setTimeout(() => {
      if (slot.users > 0 || this.slots.get(tag) !== slot) return;
      this.slots.delete(tag);
      slot.stop?.();
    }, LINGER_MS);
    slot.linger.unref();
  }

  /** `kind|waiter|value[|proof]`; anything else (a message of somebody else's) is dropped. */
  private deliver(message: string): void {
    const match = /^([gr])\|(\d{1,15})\|(\d{1,16})(?:\|([0-9a-f]{40}))?$/.exec(message);
    if (!match) return;
    const [, kind, waiterText, valueText, proof = ''] = match;
    const waiter = Number(waiterText);
    const value = Number(valueText);
    if (!Number.isSafeInteger(value)) return;
    const listener = this.waiters.get(waiter);
    if (listener) {
      this.tell(listener, kind!, value, proof);
      return;
    }
    this.unclaimed[this.nextUnclaimed] = { waiter, kind: kind!, value, proof };
    this.nextUnclaimed = (this.nextUnclaimed + 1) % UNCLAIMED_KEPT;
  }

  private tell(listener: GrantListener, kind: string, value: number, proof: string): void {
    if (kind === 'g') listener.granted(value, proof);
    else if (kind === 'r') listener.recheck(value);
  }
}
