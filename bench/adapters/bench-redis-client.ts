import { Redis, type RedisOptions } from 'ioredis';

/**
 * The ioredis settings every ioredis-based contender connects with: the ones this library gives the
 * connections it opens itself (one retry per request, a connection name), so no contender's client is
 * configured differently from another's. None of them changes the per-command cost; they are the same so
 * that nobody has to take that on trust.
 */
export const BENCH_CLIENT_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 1,
  connectionName: 'nestjs-distributed-lock-bench',
};

export function openBenchRedis(url: string): Redis {
  return new Redis(url, BENCH_CLIENT_OPTIONS);
}
