import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { RedisConnectionOption } from '../../../lib/index';
import { exitOf, forkWorker } from '../../support/child-process';
import { redisUrl, testPrefix } from '../../support/test-prefix';

const WORKER = join(__dirname, '../../lease/workers/increment.worker.ts');

/**
 * The exclusion invariant of test/lease/mutual-exclusion.spec.ts on another topology: `processes` worker
 * processes each run `loops` loops of `iterations` read-modify-write increments of one counter under one
 * lock that lives on `lockRedis` (JSON-serialisable: URL, Sentinel or Cluster options). Any overlap of two
 * holders loses an increment. Resolves with the expected and the final count.
 */
export async function runIncrementWorkers(
  file: string,
  lockRedis: RedisConnectionOption,
  { processes = 3, loops = 2, iterations = 30 } = {},
): Promise<{ expected: number; counted: number; exitCodes: (number | null)[] }> {
  const prefix = testPrefix(file);
  const counterKey = `${prefix}value`;
  const workers = Array.from({ length: processes }, () =>
    forkWorker(WORKER, [prefix, counterKey, String(loops), String(iterations)], { LOCK_TEST_REDIS_OPTION: JSON.stringify(lockRedis) }),
  );
  const exitCodes = await Promise.all(workers.map(exitOf));
  const redis = new Redis(redisUrl());
  try {
    return { expected: processes * loops * iterations, counted: Number(await redis.get(counterKey)), exitCodes };
  } finally {
    redis.disconnect();
  }
}
