import { Redis, type RedisOptions } from 'ioredis';
import type { RedisClient } from './scripts/define-script.js';

/** A URL, ioredis options, or an ioredis `Redis`/`Cluster` instance to reuse. */
export type RedisConnectionOption = string | RedisOptions | RedisClient;

/** The command connection plus how to open the subscriber that goes with it. */
export interface RedisConnection {
  readonly client: RedisClient;
  /** False when the user handed the client in: then closing it is theirs to do. */
  readonly owned: boolean;
  readonly openSubscriber: () => RedisClient;
}

/**
 * A connection the library opens fails a queued command after one reconnect attempt instead of ioredis'
 * default twenty, so an outage reaches callers as an error quickly: locks fail closed, not slow. It
 * connects on first use, so an application that fails to start leaves no socket behind.
 */
const OWNED_CLIENT_DEFAULTS: RedisOptions = {
  maxRetriesPerRequest: 1,
  connectionName: 'nestjs-distributed-lock',
  lazyConnect: true,
};

/** Closes politely when connected; a client that never connected (or is gone) is just dropped. */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  if (client.status === 'wait' || client.status === 'end') {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}

export function isRedisClient(value: unknown): value is RedisClient {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as RedisClient).evalsha === 'function' &&
    typeof (value as RedisClient).duplicate === 'function'
  );
}

export function createRedisConnection(option: RedisConnectionOption): RedisConnection {
  const reused = isRedisClient(option);
  const client = reused
    ? option
    : typeof option === 'string'
      ? new Redis(option, OWNED_CLIENT_DEFAULTS)
      : new Redis({ ...OWNED_CLIENT_DEFAULTS, ...option });
  // ioredis reports connection trouble as 'error' events too; failed commands already carry it to callers.
  if (!reused) client.on('error', ignore);
  return {
    client,
    owned: !reused,
    openSubscriber: () => {
      const subscriber = client.duplicate();
      subscriber.on('error', ignore);
      return subscriber;
    },
  };
}

function ignore(): void {}
