import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';

/**
 * What the specs of lib/stores/redis/scripts share: a client of the run's Redis, a key layout under a
 * prefix of their own, and the on-store formats written by hand (lock values, queue entries), as the
 * scripts document them.
 */
export interface ScriptFixture {
  readonly redis: Redis;
  readonly layout: RedisKeyLayout;
  /** A lock key of its own, with its slot tag, queue, fencing counter and grant channel base. */
  lock(): {
    key: string;
    lockKey: string;
    tag: string;
    fenceKey: string;
    queueKey: string;
    /** The queue of the key's shaped waiters (see shared-queue.lua.ts). */
    sharedQueueKey: string;
    grants: string;
    releaseChannel: string;
  };
  close(): Promise<void>;
}

export function scriptFixture(name: string): ScriptFixture {
  const redis = new Redis(process.env.REDIS_URL!);
  const prefix = `t:${name}:${randomBytes(3).toString('hex')}:`;
  const layout = new RedisKeyLayout(prefix);
  let n = 0;
  return {
    redis,
    layout,
    lock() {
      const key = `k${++n}`;
      const lockKey = layout.lockKey(key);
      const tag = layout.slotTag(lockKey);
      return {
        key,
        lockKey,
        tag,
        fenceKey: layout.fenceKey(lockKey),
        queueKey: layout.queueKey(lockKey),
        sharedQueueKey: layout.queueKey(lockKey, 'shaped'),
        grants: layout.grantChannel(tag, ''),
        releaseChannel: layout.releaseChannel(lockKey),
      };
    },
    async close() {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
}

/** A lock value (see lock-value.ts). */
export function lockValue(flag: '-' | 'w' | 'q', token: string, fence: number, holder = 'host:1'): string {
  return `${flag}${token}|${fence}|${holder}`;
}

/**
 * A fair queue entry (see queue.lua.ts), alive until `expiresAt` (epoch ms); with `shape` (`p5`, `r`, `w`),
 * a shaped waiter's entry in the shared queue (see shared-queue.lua.ts).
 */
export function queueEntry(
  token: string,
  options: { expiresAt?: number; ttlMs?: number; instance?: string; waiter?: string; holder?: string; shape?: string } = {},
): string {
  const { expiresAt = Date.now() + 60_000, ttlMs = 2_000, instance = 'inst', waiter = token, holder = 'host:2', shape } = options;
  return `${(expiresAt - ttlMs) * 1000}|${ttlMs}|${instance}|${waiter}|${token}${shape === undefined ? '' : `|${shape}`}|${holder}`;
}

/** A hold in a read/write lock's or semaphore's hash (see shared-hold.lua.ts), live until `deadline` (epoch ms). */
export function sharedHold(fence: number, deadline = Date.now() + 60_000, holder = 'host:1'): string {
  return `${deadline}|${fence}|${holder}`;
}

/** Messages published on `channel` from now on (resolves once subscribed). */
export async function listenTo(channel: string): Promise<{ messages: string[]; next(): Promise<string>; close(): void }> {
  const subscriber = new Redis(process.env.REDIS_URL!);
  const messages: string[] = [];
  const waiting: Array<(message: string) => void> = [];
  subscriber.on('message', (_channel: string, message: string) => {
    messages.push(message);
    waiting.shift()?.(message);
  });
  await subscriber.subscribe(channel);
  return {
    messages,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => subscriber.disconnect(),
  };
}

/** µs on the client clock, as the store sends it. */
export function micros(offsetMs = 0): number {
  return (Date.now() + offsetMs) * 1000;
}
