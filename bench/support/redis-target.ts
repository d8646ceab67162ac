import { startRedisServer } from '../../scripts/servers/redis-server.js';

/** The Redis every contender talks to in one run. */
export interface RedisTarget {
  readonly url: string;
  /** True when the bench started it: nobody else's traffic is in its command statistics. */
  readonly private: boolean;
  stop(): Promise<void>;
}

/**
 * REDIS_URL when set, otherwise a private redis-server on a free loopback port (the helper the test setup
 * uses too), so that INFO commandstats deltas only contain the bench's own traffic.
 */
export async function openRedisTarget(): Promise<RedisTarget> {
  const url = process.env.REDIS_URL;
  if (url) return { url, private: false, stop: async () => undefined };
  const server = await startRedisServer();
  return { url: server.url, private: true, stop: () => server.stop() };
}
