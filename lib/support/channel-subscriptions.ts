interface Channel<L> {
  readonly listeners: Set<L>;
  readonly ready: Promise<unknown>;
}

/** How a {@link ChannelSubscriptions} subscribes a channel on its connection, and unsubscribes it. */
export interface ChannelSubscriber {
  /** Resolves once messages of `channel` flow. */
  subscribe(channel: string): Promise<unknown>;
  /** Best effort: a failed unsubscribe only leaves a channel nobody listens to, whose messages are ignored. */
  unsubscribe(channel: string): void;
}

/**
 * Listeners by channel over one subscriber connection (Redis pub/sub, PostgreSQL LISTEN): a channel is
 * subscribed while at least one local listener is on it, so the connection's load follows contention. The
 * first listener of a channel subscribes it, the last one to stop unsubscribes it, and a subscription that
 * failed is not kept (the next listener tries again).
 */
export class ChannelSubscriptions<L> {
  private readonly channels = new Map<string, Channel<L>>();

  constructor(private readonly subscriber: ChannelSubscriber) {}

  /** Resolves once `channel` is subscribed, with the function that stops this listener. */
  async listen(channel: string, listener: L): Promise<() => void> {
    let subscription = this.channels.get(channel);
    if (!subscription) {
      subscription = { listeners: new Set(), ready: this.subscriber.subscribe(channel) };
      this.channels.set(channel, subscription);
    }
    subscription.listeners.add(listener);
    const current = subscription;
    const stop = (): void => {
      current.listeners.delete(listener);
      if (current.listeners.size > 0 || this.channels.get(channel) !== current) return;
      this.channels.delete(channel);
      this.subscriber.unsubscribe(channel);
    };
    try {
      await current.ready;
    } catch (error) {
      stop();
      throw error;
    }
    return stop;
  }

  /** The listeners of `channel` right now (empty for a channel nobody listens to). */
  listenersOf(channel: string): Iterable<L> {
    return this.channels.get(channel)?.listeners ?? NONE;
  }

  /** Whether anyone listens to `channel`. */
  has(channel: string): boolean {
    return this.channels.has(channel);
  }

  /** Every channel listened to. */
  names(): string[] {
    return [...this.channels.keys()];
  }

  /** Every listener of every channel, each once per channel it listens to. */
  everyListener(): L[] {
    return [...this.channels.values()].flatMap(({ listeners }) => [...listeners]);
  }

  get size(): number {
    return this.channels.size;
  }

  /** Forgets every channel without unsubscribing: the connection they were on is going away. */
  clear(): void {
    this.channels.clear();
  }
}

const NONE: Iterable<never> = Object.freeze([]);
