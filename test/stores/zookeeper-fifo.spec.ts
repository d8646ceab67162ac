import type { Lease } from '../../lib/index';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { openObserver, queueOf, pollUntil, type ZookeeperObserver } from './zookeeper-test-support';

const WAITERS = 4;

describe('ZooKeeper store: a fair queue of sequential nodes', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let observer: ZookeeperObserver;
  let apps: LockApp[];

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    observer = await openObserver(ensemble);
    apps = await Promise.all(
      Array.from({ length: WAITERS + 1 }, (_, i) =>
        createLockApp({ store: 'zookeeper', zookeeper: ensemble.connect, keyPrefix: prefix, holder: `app-${i}`, leaseMs: 10_000 }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await observer?.close();
    await ensemble.stop();
  });

  it('grants waiters from several applications in the order they queued, each watching only its predecessor', async () => {
    const member = ensemble.members[0]!;
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
      // Queue order is arrival order in ZooKeeper: let each waiter's node land before the next one starts.
      await pollUntil(async () => (await queueOf(observer, prefix, 'fifo')).length === i + 1, `waiter ${i} queued`);
    }
    const queue = await queueOf(observer, prefix, 'fifo');
    expect(queue.map((entry) => entry.holder)).toEqual(['app-0', 'app-1', 'app-2', 'app-3', 'app-4']);

    const lockPath = queue[0]!.path.slice(0, queue[0]!.path.lastIndexOf('/'));
    let holder = first;
    for (let next = 1; next <= WAITERS; next++) {
      // Every waiter still in line watches exactly one node, its predecessor's, and nobody else watches
      // it: a release fires one watch event, to the next waiter, none to those further back (no herd).
      const predecessors = queue.slice(next - 1, WAITERS).map((entry) => entry.path);
      await pollUntil(async () => {
        const watched = [...(await member.watchesByPath())].filter(([path]) => path.startsWith(`${lockPath}/`));
        return watched.length === predecessors.length && predecessors.every((path) => watched.some(([p, sessions]) => p === path && sessions.length === 1));
      }, `each of the ${WAITERS - next + 1} waiters watches its predecessor alone`);
      await holder.release();
      const lease = await waiting[next - 1]!;
      expect(granted).toEqual(Array.from({ length: next }, (_, i) => i + 1));
      expect(lease.fencingToken).toBeGreaterThan(holder.fencingToken);
      holder = lease;
    }
    await holder.release();
    await pollUntil(async () => (await queueOf(observer, prefix, 'fifo')).length === 0, 'the queue is empty');
  });
});
