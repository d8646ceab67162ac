import { Redis } from 'ioredis';

/**
 * Polls `condition` until it holds: for servers converging (a cluster agreeing on its slots, sentinels
 * finding each other), where there is no event to wait on. `what` names the condition in the timeout error.
 */
export async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await condition()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One question to the server on a loopback port, over a connection opened and closed for it. */
export async function askRedis<T>(port: number, query: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await query(redis);
  } finally {
    redis.disconnect();
  }
}
