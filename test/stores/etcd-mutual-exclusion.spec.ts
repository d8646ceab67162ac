import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { exitOf, forkWorker } from '../support/child-process';
import { redisUrl, testPrefix } from '../support/test-prefix';

const PROCESSES = 3;
const LOOPS_PER_PROCESS = 2;
const ITERATIONS = 25;

describe('mutual exclusion across processes on etcd', () => {
  let cluster: EtcdCluster;
  beforeAll(async () => {
    cluster = await startEtcdCluster();
  });
  afterAll(() => cluster.stop());

  it('loses no increment when 3 processes do read-modify-write under one etcd lock', async () => {
    const prefix = testPrefix(__filename);
    const counterKey = `${prefix}value`;
    const redis = new Redis(redisUrl());
    try {
      const workers = Array.from({ length: PROCESSES }, () =>
        forkWorker(
          join(__dirname, '../lease/workers/increment.worker.ts'),
          [prefix, counterKey, String(LOOPS_PER_PROCESS), String(ITERATIONS)],
          { LOCK_TEST_STORE: 'etcd', ETCD_ENDPOINTS: cluster.endpoints.join(',') },
        ),
      );
      expect(await Promise.all(workers.map(exitOf))).toEqual(workers.map(() => 0));
      expect(Number(await redis.get(counterKey))).toBe(PROCESSES * LOOPS_PER_PROCESS * ITERATIONS);
    } finally {
      redis.disconnect();
    }
  });
});
