import { join } from 'node:path';
import { Redis } from 'ioredis';
import { exitOf, forkWorker } from '../support/child-process';
import { redisUrl, testPrefix } from '../support/test-prefix';

const PROCESSES = 3;
const LOOPS_PER_PROCESS = 2;
const ITERATIONS = 25;

describe('several keys at once across processes', () => {
  it('never deadlocks when 3 processes lock the same two keys named in opposite orders, and loses no update to either', async () => {
    const prefix = testPrefix(__filename);
    const counterKey = `${prefix}value`;
    const redis = new Redis(redisUrl());
    try {
      const workers = Array.from({ length: PROCESSES }, (_, index) =>
        forkWorker(join(__dirname, 'workers/multi-key-increment.worker.ts'), [
          prefix,
          counterKey,
          index % 2 === 0 ? 'forward' : 'backward',
          String(LOOPS_PER_PROCESS),
          String(ITERATIONS),
        ]),
      );
      expect(await Promise.all(workers.map(exitOf))).toEqual(workers.map(() => 0));
      const total = PROCESSES * LOOPS_PER_PROCESS * ITERATIONS;
      expect(Number(await redis.get(`${counterKey}:x`))).toBe(total);
      expect(Number(await redis.get(`${counterKey}:y`))).toBe(total);
    } finally {
      redis.disconnect();
    }
  });
});
