import { join } from 'node:path';
import { Redis } from 'ioredis';
import { exitOf, forkWorker } from '../support/child-process';
import { redisUrl, testPrefix } from '../support/test-prefix';

const PROCESSES = 3;
const LOOPS_PER_PROCESS = 2;
const ITERATIONS = 30;

// Both ways a Redis waiter gets a taken key: retrying on release notifications (the default), and in line.
describe.each([
  ['default', {}],
  ['fair: true', { fair: true }],
])('mutual exclusion across processes (%s)', (mode, moduleOptions) => {
  it('loses no increment when 3 processes do read-modify-write under one lock', async () => {
    const prefix = `${testPrefix(__filename)}${'fair' in moduleOptions ? 'fair:' : ''}`;
    const counterKey = `${prefix}value`;
    const redis = new Redis(redisUrl());
    try {
      const workers = Array.from({ length: PROCESSES }, () =>
        forkWorker(join(__dirname, 'workers/increment.worker.ts'), [
          prefix,
          counterKey,
          String(LOOPS_PER_PROCESS),
          String(ITERATIONS),
        ], { LOCK_TEST_MODULE_OPTIONS: JSON.stringify(moduleOptions) }),
      );
      expect(await Promise.all(workers.map(exitOf))).toEqual(workers.map(() => 0));
      expect(Number(await redis.get(counterKey))).toBe(PROCESSES * LOOPS_PER_PROCESS * ITERATIONS);
    } finally {
      redis.disconnect();
    }
  });
});
