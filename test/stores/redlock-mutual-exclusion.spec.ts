import { join } from 'node:path';
import { Redis } from 'ioredis';
import { exitOf, forkWorker } from '../support/child-process';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { RedlockMasters } from './redlock-test-support';

const PROCESSES = 3;
const LOOPS_PER_PROCESS = 2;
const ITERATIONS = 25;

describe('mutual exclusion across processes on Redlock', () => {
  let masters: RedlockMasters;
  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
  });
  afterAll(() => masters.stop());

  it('loses no increment when 3 processes do read-modify-write under one Redlock lock, each write under a higher fencing token', async () => {
    const prefix = testPrefix(__filename);
    // The value the workers race on lives on the run's own Redis, apart from the three masters.
    const counterKey = `${prefix}value`;
    const redis = new Redis(redisUrl());
    try {
      const workers = Array.from({ length: PROCESSES }, () =>
        forkWorker(
          join(__dirname, '../lease/workers/increment.worker.ts'),
          [prefix, counterKey, String(LOOPS_PER_PROCESS), String(ITERATIONS)],
          { LOCK_TEST_STORE: 'redlock', REDLOCK_MASTERS: masters.urls.join(','), LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ leaseMs: 10_000 }) },
        ),
      );
      expect(await Promise.all(workers.map(exitOf))).toEqual(workers.map(() => 0));
      const total = PROCESSES * LOOPS_PER_PROCESS * ITERATIONS;
      expect(Number(await redis.get(counterKey))).toBe(total);
      // The history in write order: values 1..total, and every write under a greater token than the one before.
      const history = (await redis.lrange(`${counterKey}:history`, 0, -1)).map((entry) => entry.split(':').map(Number) as [number, number]);
      expect(history.map(([value]) => value)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      const tokens = history.map(([, token]) => token);
      expect(tokens.every((token, i) => i === 0 || token > tokens[i - 1]!)).toBe(true);
    } finally {
      redis.disconnect();
    }
  });
});
