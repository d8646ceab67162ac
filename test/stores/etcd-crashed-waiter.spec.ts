import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { exitOf, forkWorker, nextMessage } from '../support/child-process';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { openObserver, queueOf, pollUntil } from './etcd-test-support';

const HOLD_WORKER = join(__dirname, '../lease/workers/hold.worker.ts');
/** The crashed waiter's lease: what it may block the queue for, at most. */
const CRASHED_LEASE_MS = 2_000;

describe('etcd store: a waiter that crashes', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let app: LockApp;

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    app = await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: 'test' });
  });
  afterAll(async () => {
    await app.close();
    observer.close();
    await cluster.stop();
  });

  it('leaves the queue when its etcd lease runs out (SIGKILL), and the waiter behind it is granted', async () => {
    const env = { LOCK_TEST_STORE: 'etcd', ETCD_ENDPOINTS: cluster.endpoints.join(',') };
    const held = await app.locks.acquire('job');
    const crashed = forkWorker(HOLD_WORKER, [prefix, 'job', String(CRASHED_LEASE_MS), '60000'], env);
    await pollUntil(async () => (await queueOf(observer, prefix, 'job')).length === 2, 'the first waiter queued');
    const behind = forkWorker(HOLD_WORKER, [prefix, 'job', '30000', '60000'], env);
    try {
      await pollUntil(async () => (await queueOf(observer, prefix, 'job')).length === 3, 'the second waiter queued');
      const queue = await queueOf(observer, prefix, 'job');
      expect(queue.map((entry) => entry.holder)).toEqual(['test', `${hostname()}:${crashed.pid}`, `${hostname()}:${behind.pid}`]);

      crashed.kill('SIGKILL');
      await exitOf(crashed);
      const granted = nextMessage<{ held: boolean; fencingToken: number }>(behind, (message) => message.held);
      await held.release();

      // Nobody deletes the crashed waiter's key but its lease; until then it stands first in line. The
      // waiter behind it (60 s to wait) is granted once it is gone, with its own queue place as token.
      expect((await granted).fencingToken).toBe(queue[2]!.createRevision);
      expect((await queueOf(observer, prefix, 'job')).map((entry) => entry.holder)).toEqual([`${hostname()}:${behind.pid}`]);
    } finally {
      behind.kill('SIGKILL');
      await exitOf(behind);
    }
  });
});
