import { closeRedisClient } from './redis-client.factory.js';
import type { RedisClient } from './scripts/define-script.js';

interface Subscription {
  readonly listeners: Set<() => void>;
  readonly ready: Promise<unknown>;
}

/**
 * Wake-ups for waiters, over one subscriber connection shared by every waiting key. A channel is
 * subscribed while at least one local waiter listens on it, so the subscriber's load follows contention.
 */
export class ReleaseChannel {
  private subscriber?: RedisClient;
  private readonly subscriptions = new Map<string, Subscription>();

  constructor(private readonly connect: () => RedisClient) {}

  async listen(channel: string, listener: () => void): Promise<() => void> {
    let subscription = this.subscriptions.get(channel);
    if (!subscription) {
      subscription = { listeners: new Set(), ready: this.client().subscribe(channel) };
      this.subscriptions.set(channel, subscription);
    }
    subscription.listeners.add(listener);
    const current = subscription;
    const stop = (): void => {
      current.listeners.delete(listener);
      if (current.listeners.size > 0 || this.subscriptions.get(channel) !== current) return;
      this.subscriptions.delete(channel);
      // A failed UNSUBSCRIBE only leaves a channel with no listener: its messages are ignored.
      this.subscriber?.unsubscribe(channel).catch(() => undefined);
    };
    try {
      await current.ready;
    } catch (error) {
      stop();
      throw error;
    }
    return stop;
  }

  async close(): Promise<void> {
    this.subscriptions.clear();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await closeRedisClient(subscriber);
  }

  private client(): RedisClient {
    if (!this.subscriber) {
      const subscriber = this.connect();
      subscriber.on('message', (channel: string) => {
        for (const listener of this.subscriptions.get(channel)?.listeners ?? []) listener();
      });
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }
}
