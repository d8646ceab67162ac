import { Redis } from 'ioredis';
import { startRedisServer } from '../../scripts/servers/redis-server';

/**
 * One private redis-server for the whole run, on a free loopback port; REDIS_URL points the run at an
 * existing server instead. Workers inherit REDIS_URL through the environment.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.REDIS_URL) {
    const probe = new Redis(process.env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await probe.connect();
      await probe.ping();
    } catch (error) {
      throw new Error(`REDIS_URL=${process.env.REDIS_URL} does not answer PING: ${(error as Error).message}`);
    } finally {
      probe.disconnect();
    }
    return;
  }
  const server = await startRedisServer();
  process.env.REDIS_URL = server.url;
  process.env.LOCK_TEST_REDIS_PID = String(server.pid);
}
