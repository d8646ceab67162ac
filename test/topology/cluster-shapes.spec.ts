import { join } from 'node:path';
import { Redis } from 'ioredis';
import { exitOf, forkWorker } from '../support/child-process';
import { createLockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { clusterOption, keysOnTwoMasters, lazyCluster } from './support/topology-fixtures';

const startCluster = lazyCluster({ masters: 3, replicasPerMaster: 0 });

describe('read/write locks and semaphores on a Redis Cluster', () => {
  const prefix = testPrefix(__filename);

  it('keeps a key’s whole shared state on its own node: readers together, the waiting writer kept out until they released, each hold renewed in the per-node batch', async () => {
    const cluster = await startCluster();
    const app = await createLockApp({ redis: clusterOption(cluster), keyPrefix: prefix, leaseMs: 900 });
    const other = await createLockApp({ redis: clusterOption(cluster), keyPrefix: prefix });
    try {
      const [a, b] = await keysOnTwoMasters(cluster, prefix, 'report');
      const readers = [await app.locks.acquire(a, { mode: 'read' }), await app.locks.acquire(a, { mode: 'read' }), await app.locks.acquire(b, { permits: 2 })];
      for (const lease of readers) await app.next('renewed', (e) => e.fencingToken === lease.fencingToken);
      const contention = other.next('contention', (e) => e.key === a);
      const writing = other.locks.acquire(a, { mode: 'write', waitMs: 30_000 });
      await contention;
      expect(await app.locks.tryAcquire(a, { mode: 'read' })).toBeNull();
      await Promise.all(readers.map((lease) => lease.release()));
      const writer = await writing;
      expect(writer.fencingToken).toBeGreaterThan(readers[1]!.fencingToken);
      await writer.release();
      expect(await app.store.list()).toEqual([]);
    } finally {
      await app.close();
      await other.close();
    }
  });

  it('never lets a writer in with another holder when 3 processes share a key on a Cluster (exact writer counter)', async () => {
    const cluster = await startCluster();
    const historyKey = `${prefix}history`;
    const redis = new Redis(redisUrl());
    try {
      const workers = Array.from({ length: 3 }, () =>
        forkWorker(join(__dirname, '../lease/workers/shaped-history.worker.ts'), [prefix, historyKey, 'rw', '2', '8'], {
          LOCK_TEST_REDIS_OPTION: JSON.stringify(clusterOption(cluster)),
        }),
      );
      expect(await Promise.all(workers.map(exitOf))).toEqual([0, 0, 0]);
      const history = await redis.lrange(historyKey, 0, -1);
      const active: string[] = [];
      const violations: string[] = [];
      for (const entry of history) {
        const [kind, mode, fence] = entry.split('|') as [string, string, string];
        if (kind === 'exit') {
          active.splice(active.indexOf(`${mode}|${fence}`), 1);
          continue;
        }
        if (mode === 'write' ? active.length > 0 : active.some((held) => held.startsWith('write'))) violations.push(`${entry} with ${active.join(',')}`);
        active.push(`${mode}|${fence}`);
      }
      expect(violations).toEqual([]);
      expect(history.length).toBe(2 * 3 * 2 * 8);
      expect(Number(await redis.get(`${historyKey}:counter`))).toBe(Number(await redis.get(`${historyKey}:writes`)));
    } finally {
      redis.disconnect();
    }
  });
});
