import type { AcquireOptions, Lease } from '../../lib/index';
import { startZookeeperEnsemble, type ZookeeperEnsemble, type ZookeeperMember } from '../../scripts/servers/zookeeper-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { expectOneOrderForEveryShape, expectReadersAroundWriters, queueWaiter } from './shaped-queue.scenarios';
import { openObserver, queueOf, sessionOf, pollUntil, watchesBySession, type ZookeeperObserver } from './zookeeper-test-support';

const APPS = 6;

/**
 * Read/write locks and semaphores wait under the lock's node with plain locks, in the order they came,
 * across applications; each waiter watches only what it waits for, so a release notifies only waiters it
 * admits (and, for a permit waiter granted by it, the waiter behind through its mark). ZooKeeper's own
 * table of watches (`wchp`) shows who watches what; its count of notifications sent (`mntr`) shows whom
 * a release woke. A watch cannot be taken back with this client: one left by a waiter that was granted
 * meanwhile fires once more at its node, to a process that ignores it (counted by reading the table).
 */
describe('ZooKeeper store: read/write locks and semaphores queue under the lock’s node', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let member: ZookeeperMember;
  let observer: ZookeeperObserver;
  let apps: LockApp[];
  const holders = (key: string): Promise<string[]> => queueOf(observer, prefix, key).then((queue) => queue.map((entry) => entry.holder));
  const sent = (): Promise<number> => member.watchNotifications();

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    member = ensemble.members[0]!;
    observer = await openObserver(ensemble);
    apps = await Promise.all(
      Array.from({ length: APPS }, (_, i) =>
        createLockApp({ store: 'zookeeper', zookeeper: ensemble.connect, keyPrefix: prefix, holder: `app-${i}`, leaseMs: 10_000 }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await observer?.close();
    await ensemble.stop();
  });

  const queued = (key: string, i: number, options: AcquireOptions, granted: number[]): Promise<[Promise<Lease>]> =>
    queueWaiter({ holders }, apps, key, i, options, granted);

  /** Each application's node and session, by application number, once all of them queued. */
  const nodesOf = async (key: string): Promise<{ lockPath: string; path: string[]; session: string[] }> => {
    const queue = await queueOf(observer, prefix, key);
    const path: string[] = [];
    const session: string[] = [];
    for (const entry of queue) {
      const app = Number(entry.holder.slice('app-'.length));
      path[app] = entry.path;
      session[app] = (await sessionOf(observer, entry.path))!;
    }
    return { lockPath: queue[0]!.path.slice(0, queue[0]!.path.lastIndexOf('/')), path, session };
  };

  /** Until each waiting application's session watches exactly the nodes of the applications listed, nothing else of the lock. */
  const untilWatching = async (nodes: Awaited<ReturnType<typeof nodesOf>>, expected: Array<[number, number[]]>): Promise<void> => {
    const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item, i) => item === b[i]);
    await pollUntil(async () => {
      const watched = await watchesBySession(member, nodes.lockPath);
      return expected.every(([waiter, targets]) => same(watched.get(nodes.session[waiter]!) ?? [], targets.map((t) => nodes.path[t]!).sort()));
    }, `the waiters watch ${JSON.stringify(expected)}`);
  };

  /** Sessions watching one node now. */
  const watchersOf = async (path: string): Promise<number> => (await member.watchesByPath()).get(path)?.length ?? 0;

  it('lets readers in together behind a writer, keeps readers behind a waiting writer out, and wakes nobody a release cannot admit', () => {
    let nodes: Awaited<ReturnType<typeof nodesOf>> | undefined;
    return expectReadersAroundWriters({ holders }, apps, {
      // Readers watch the last writer before them, the writer the node just before it.
      watching: async (stage) => {
        nodes ??= await nodesOf('rw');
        await untilWatching(nodes, stage === 'queued' ? [[1, [0]], [2, [0]], [3, [2]], [4, [3]], [5, [3]]] : [[4, [3]], [5, [3]]]);
      },
      since: async () => {
        const before = await sent();
        return { notified: (count, what) => pollUntil(async () => (await sent()) - before === count, what) };
      },
    });
  });

  it('grants permits first come first served, each release waking the next waiter and, through its mark, the one behind it', async () => {
    const granted: number[] = [];
    const leases = [await apps[0]!.locks.acquire('partner', { permits: 2 }), await apps[1]!.locks.acquire('partner', { permits: 2 })];
    const waiting = [
      ...(await queued('partner', 2, { permits: 2 }, granted)),
      ...(await queued('partner', 3, { permits: 2 }, granted)),
      ...(await queued('partner', 4, { permits: 2 }, granted)),
    ];
    const nodes = await nodesOf('partner');
    // The first waiter watches the two holders before it (either one's release admits it); the others the waiter just before them.
    const watching: Array<Array<[number, number[]]>> = [
      [[2, [0, 1]], [3, [2]], [4, [3]]],
      [[3, [1, 2]], [4, [3]]],
      [[4, [2, 3]]],
    ];
    for (let next = 0; next < waiting.length; next++) {
      await untilWatching(nodes, watching[next]!);
      // Whoever watches the released node now: the waiter it admits, and a watch an earlier waiter left.
      const notified = await watchersOf(nodes.path[next]!);
      const before = await sent();
      await leases[next]!.release();
      const lease = await waiting[next]!;
      leases.push(lease);
      expect(granted).toEqual([2, 3, 4].slice(0, next + 1));
      // Those, and the granted waiter's mark to the waiter right behind it, if any.
      await pollUntil(async () => (await sent()) - before === notified + (next < waiting.length - 1 ? 1 : 0), 'the notifications of one release');
      expect(lease.fencingToken).toBeGreaterThan(Math.max(...leases.slice(0, -1).map((l) => l.fencingToken)));
    }
    expect((await apps[5]!.store.list('partner')).map((lock) => [lock.holder, lock.shape])).toEqual([
      ['app-3', 'permits'],
      ['app-4', 'permits'],
    ]);
    await Promise.all(leases.slice(-2).map((lease) => lease.release()));
  });

  it('queues plain locks and shaped ones of one key in one order, and a waiter that gives up lets those behind it in', () =>
    expectOneOrderForEveryShape({ holders }, apps));
});
