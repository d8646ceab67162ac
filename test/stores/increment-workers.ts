import { join } from 'node:path';
import { Redis } from 'ioredis';
import { exitOf, forkWorker } from '../support/child-process';
import { redisUrl, testPrefix } from '../support/test-prefix';

export interface IncrementRun {
  /** The spec file (its name makes the key prefix). */
  readonly file: string;
  /** The environment that makes the workers lock on the store under test (see test/lease/workers/worker-store.ts). */
  readonly env: NodeJS.ProcessEnv;
  readonly processes: number;
  readonly loopsPerProcess: number;
  readonly iterations: number;
}

/**
 * `processes` worker processes, each with `loopsPerProcess` loops doing `iterations` read-modify-write
 * increments of one value under one lock (test/lease/workers/increment.worker.ts). Asserts every worker
 * exited cleanly, the value is exactly the number of increments (an overlap would lose one), and the
 * history in write order is 1..total, each write under a higher fencing token than the one before.
 */
export async function expectExactIncrements(run: IncrementRun): Promise<void> {
  const prefix = testPrefix(run.file);
  // The value the workers race on lives on the run's own Redis, apart from the store under test.
  const counterKey = `${prefix}value`;
  const redis = new Redis(redisUrl());
  try {
    const workers = Array.from({ length: run.processes }, () =>
      forkWorker(join(__dirname, '../lease/workers/increment.worker.ts'), [prefix, counterKey, String(run.loopsPerProcess), String(run.iterations)], run.env),
    );
    expect(await Promise.all(workers.map(exitOf))).toEqual(workers.map(() => 0));
    const total = run.processes * run.loopsPerProcess * run.iterations;
    expect(Number(await redis.get(counterKey))).toBe(total);
    const history = (await redis.lrange(`${counterKey}:history`, 0, -1)).map((entry) => entry.split(':').map(Number) as [number, number]);
    expect(history.map(([value]) => value)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const tokens = history.map(([, token]) => token);
    expect(tokens.every((token, i) => i === 0 || token > tokens[i - 1]!)).toBe(true);
  } finally {
    redis.disconnect();
  }
}
