import { closeRedisClient } from '../connection/redis-connection.js';
import type { RedisClient } from '../connection/redis-client.js';
import { ChannelSubscriptions } from '../../../support/channel-subscriptions.js';

/** Told each message on a channel; the release channels' messages are empty, the grant channels' not. */
export type ChannelListener = (message: string) => void;

/**
 * Wake-ups for waiters, over one subscriber connection shared by every waiting key and the fair queue's
 * grant channels (on a Cluster with sharded pub/sub, ioredis keeps one per node behind it). A channel is
 * subscribed while at least one local listener is on it, so the subscriber's load follows contention.
 */
export class ReleaseChannel {
  private subscriber?: RedisClient;
  private readonly subscriptions = new ChannelSubscriptions<ChannelListener>({
    subscribe: (channel) => {
      const client = this.client();
      return this.sharded ? client.ssubscribe(channel) : client.subscribe(channel);
    },
    // A failed UNSUBSCRIBE only leaves a channel with no listener: its messages are ignored.
    unsubscribe: (channel) => {
      const subscriber = this.subscriber;
      (this.sharded ? subscriber?.sunsubscribe(channel) : subscriber?.unsubscribe(channel))?.catch(() => undefined);
    },
  });

  constructor(
    private readonly connect: () => RedisClient,
    /** SSUBSCRIBE / `smessage` instead of SUBSCRIBE / `message`. */
    private readonly sharded: boolean,
    private readonly closeTimeoutMs: number,
  ) {}

  listen(channel: string, listener: ChannelListener): Promise<() => void> {
    return this.subscriptions.listen(channel, listener);
  }

  async close(): Promise<void> {
    this.subscriptions.clear();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await closeRedisClient(subscriber, this.closeTimeoutMs);
  }

  private client(): RedisClient {
    if (!this.subscriber) {
      const subscriber = this.connect();
      subscriber.on(this.sharded ? 'smessage' : 'message', (channel: string, message: string) => {
        for (const listener of this.subscriptions.listenersOf(channel)) listener(message);
      });
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }
}
