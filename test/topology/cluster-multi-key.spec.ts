import { join } from 'node:path';
import { Redis } from 'ioredis';
import { LockNotAcquiredError } from '../../lib/index';
import { exitOf, forkWorker } from '../support/child-process';
import { createLockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { clusterOption, keysOnTwoMasters, lazyCluster } from './support/topology-fixtures';

const startCluster = lazyCluster({ masters: 3, replicasPerMaster: 0 });

describe('several keys at once on a Redis Cluster', () => {
  const prefix = testPrefix(__filename);

  it('holds keys served by different masters together, each with its own fencing token, and gives back what it got when one is taken', async () => {
    const cluster = await startCluster();
    const app = await createLockApp({ redis: clusterOption(cluster), keyPrefix: prefix });
    const other = await createLockApp({ redis: clusterOption(cluster), keyPrefix: prefix });
    try {
      const [a, b] = await keysOnTwoMasters(cluster, prefix, 'acct');
      await app.locks.withLocks([b, a], async (set) => {
        expect(set.keys).toEqual([a, b].sort());
        for (const key of [a, b]) expect((await app.store.inspect(key))?.fencingToken).toBe(set.fencingTokens.get(key));
      });
      expect(await app.store.inspect(a)).toBeNull();
      expect(await app.store.inspect(b)).toBeNull();

      const [first, second] = [a, b].sort() as [string, string];
      const blocker = await other.locks.acquire(second);
      try {
        const error = await app.locks.acquire([a, b], { waitMs: 0 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockNotAcquiredError);
        expect((error as LockNotAcquiredError).key).toBe(second);
        expect(app.recorded('released').some((e) => e.key === first)).toBe(true);
        expect(await app.store.inspect(first)).toBeNull();
      } finally {
        await blocker.release();
      }
    } finally {
      await app.close();
      await other.close();
    }
  });

  it('never deadlocks when 3 processes lock two keys on different masters named in opposite orders, and loses no update', async () => {
    const cluster = await startCluster();
    const counterKey = `${prefix}value`;
    const redis = new Redis(redisUrl());
    const [keyX, keyY] = await keysOnTwoMasters(cluster, prefix, 'account');
    try {
      const workers = Array.from({ length: 3 }, (_, index) =>
        forkWorker(
          join(__dirname, '../lease/workers/multi-key-increment.worker.ts'),
          [prefix, counterKey, index % 2 === 0 ? 'forward' : 'backward', '2', '10', keyX, keyY],
          { LOCK_TEST_REDIS_OPTION: JSON.stringify(clusterOption(cluster)) },
        ),
      );
      expect(await Promise.all(workers.map(exitOf))).toEqual([0, 0, 0]);
      expect(Number(await redis.get(`${counterKey}:x`))).toBe(60);
      expect(Number(await redis.get(`${counterKey}:y`))).toBe(60);
    } finally {
      redis.disconnect();
    }
  });
});
