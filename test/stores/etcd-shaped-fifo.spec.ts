import type { Etcd3 } from 'etcd3';
import type { AcquireOptions, Lease } from '../../lib/index';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { openObserver, queueOf, pollUntil } from './etcd-test-support';
import { expectOneOrderForEveryShape, expectReadersAroundWriters, queueWaiter } from './shaped-queue.scenarios';

const APPS = 6;
/** etcd's count of watch events it has sent, and of watchers it serves: what "no herd" is measured by. */
const EVENTS_SENT = 'etcd_debugging_mvcc_events_total';
const WATCHERS = 'etcd_debugging_mvcc_watcher_total';

/**
 * Read/write locks and semaphores wait in the lock's one etcd queue, in the order they came, across
 * applications; each waiter watches only what it waits for, so a release wakes only waiters it admits.
 */
describe('etcd store: read/write locks and semaphores queue in etcd', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let apps: LockApp[];
  const holders = (key: string): Promise<string[]> => queueOf(observer, prefix, key).then((queue) => queue.map((entry) => entry.holder));
  const eventsSent = (): Promise<number> => cluster.metric(cluster.members[0]!, EVENTS_SENT);

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    apps = await Promise.all(
      Array.from({ length: APPS }, (_, i) => createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: `app-${i}` })),
    );
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    observer.close();
    await cluster.stop();
  });

  const queued = (key: string, i: number, options: AcquireOptions, granted: number[]): Promise<[Promise<Lease>]> =>
    queueWaiter({ holders }, apps, key, i, options, granted);

  it('lets readers in together behind a writer, keeps readers behind a waiting writer out, and wakes nobody a release cannot admit', () =>
    expectReadersAroundWriters({ holders }, apps, {
      // One watch per waiter: readers on the last writer before them, the writer on the last key before it.
      watching: async (stage) => {
        const watchers = stage === 'queued' ? 5 : 2;
        await pollUntil(async () => (await cluster.metric(cluster.members[0]!, WATCHERS)) === watchers, `the waiters watch (${stage})`);
      },
      since: async () => {
        const before = await eventsSent();
        return { notified: (count, what) => pollUntil(async () => (await eventsSent()) - before === count, what) };
      },
    }));

  it('grants permits first come first served, each release waking the next waiter and, through its mark, the one behind it', async () => {
    const granted: number[] = [];
    const held = await Promise.all([apps[0]!.locks.acquire('partner', { permits: 2 }), apps[1]!.locks.acquire('partner', { permits: 2 })]);
    const waiting = [
      ...(await queued('partner', 2, { permits: 2 }, granted)),
      ...(await queued('partner', 3, { permits: 2 }, granted)),
      ...(await queued('partner', 4, { permits: 2 }, granted)),
    ];
    await pollUntil(async () => (await cluster.metric(cluster.members[0]!, WATCHERS)) === 3, 'every waiter watches');
    const leases = [...held];
    for (let next = 0; next < waiting.length; next++) {
      const sent = await eventsSent();
      await leases[next]!.release();
      const lease = await waiting[next]!;
      leases.push(lease);
      expect(granted).toEqual([2, 3, 4].slice(0, next + 1));
      // The deletion to the first waiter; its mark to the waiter right behind it, if any.
      await pollUntil(async () => (await eventsSent()) - sent === (next < waiting.length - 1 ? 2 : 1), 'the wake-ups of one release');
      expect(lease.fencingToken).toBeGreaterThan(Math.max(...leases.slice(0, -1).map((l) => l.fencingToken)));
    }
    expect((await apps[5]!.store.list('partner')).map((lock) => lock.holder)).toEqual(['app-3', 'app-4']);
    await Promise.all(leases.slice(-2).map((lease) => lease.release()));
  });

  it('queues plain locks and shaped ones of one key in one order, and a waiter that gives up lets those behind it in', () =>
    expectOneOrderForEveryShape({ holders }, apps));
});
