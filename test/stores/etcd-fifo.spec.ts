import type { Etcd3 } from 'etcd3';
import type { Lease } from '../../lib/index';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { openObserver, queueOf, pollUntil } from './etcd-test-support';

const WAITERS = 4;
/** etcd's count of watch events it has sent, and of watchers it serves: what "no herd" is measured by. */
const EVENTS_SENT = 'etcd_debugging_mvcc_events_total';
const WATCHERS = 'etcd_debugging_mvcc_watcher_total';

describe('etcd store: a fair queue in etcd', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let apps: LockApp[];

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    apps = await Promise.all(
      Array.from({ length: WAITERS + 1 }, (_, i) => createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: `app-${i}` })),
    );
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    observer.close();
    await cluster.stop();
  });

  it('grants waiters from several applications in the order they queued, each release waking only the next one', async () => {
    const member = cluster.members[0]!;
    const first = await apps[0]!.locks.acquire('fifo');
    const granted: number[] = [];
    const waiting: Array<Promise<Lease>> = [];
    for (let i = 1; i <= WAITERS; i++) {
      waiting.push(
        apps[i]!.locks.acquire('fifo', { waitMs: 60_000 }).then((lease) => {
          granted.push(i);
          return lease;
        }),
      );
      // Queue order is arrival order in etcd: let each waiter's key land before the next one starts.
      await pollUntil(async () => (await queueOf(observer, prefix, 'fifo')).length === i + 1, `waiter ${i} queued`);
    }
    expect((await queueOf(observer, prefix, 'fifo')).map((entry) => entry.holder)).toEqual(['app-0', 'app-1', 'app-2', 'app-3', 'app-4']);
    // Every waiter watches exactly one key, its predecessor's.
    await pollUntil(async () => (await cluster.metric(member, WATCHERS)) === WAITERS, 'every waiter watches');

    let holder = first;
    for (let next = 1; next <= WAITERS; next++) {
      const sentBefore = await cluster.metric(member, EVENTS_SENT);
      await holder.release();
      const lease = await waiting[next - 1]!;
      expect(granted).toEqual(Array.from({ length: next }, (_, i) => i + 1));
      expect(lease.fencingToken).toBeGreaterThan(holder.fencingToken);
      // One deletion, one event delivered: to the next waiter, none to those further back.
      expect((await cluster.metric(member, EVENTS_SENT)) - sentBefore).toBe(1);
      holder = lease;
    }
    await holder.release();
    expect(await queueOf(observer, prefix, 'fifo')).toEqual([]);
  });
});
