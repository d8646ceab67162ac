import type { Etcd3 } from 'etcd3';
import type { AcquireOptions, Lease } from '../../lib/index';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { openObserver, queueOf, until } from './etcd-test-support';

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

  /**
   * Application `i` waits for `key`, its key queued before the next one starts (queue order is arrival
   * order in etcd). The wait comes back in an array: an async function would adopt the promise's state.
   */
  const queued = async (key: string, i: number, options: AcquireOptions, granted: number[]): Promise<[Promise<Lease>]> => {
    const before = (await queueOf(observer, prefix, key)).length;
    const waiting = apps[i]!.locks.acquire(key, { ...options, waitMs: 60_000 }).then((lease) => {
      granted.push(i);
      return lease;
    });
    await until(async () => (await queueOf(observer, prefix, key)).length === before + 1, `app-${i} queued`);
    return [waiting];
  };

  it('lets readers in together behind a writer, keeps readers behind a waiting writer out, and wakes nobody a release cannot admit', async () => {
    const granted: number[] = [];
    const writer = await apps[0]!.locks.acquire('rw', { mode: 'write' });
    const [r1] = await queued('rw', 1, { mode: 'read' }, granted);
    const [r2] = await queued('rw', 2, { mode: 'read' }, granted);
    const [w3] = await queued('rw', 3, { mode: 'write' }, granted);
    const [r4] = await queued('rw', 4, { mode: 'read' }, granted);
    const [r5] = await queued('rw', 5, { mode: 'read' }, granted);
    expect(await holders('rw')).toEqual(['app-0', 'app-1', 'app-2', 'app-3', 'app-4', 'app-5']);
    // One watch per waiter: readers on the last writer before them, the writer on the last key before it.
    await until(async () => (await cluster.metric(cluster.members[0]!, WATCHERS)) === 5, 'every waiter watches');

    let sent = await eventsSent();
    await writer.release();
    const [first, second] = await Promise.all([r1, r2]);
    expect(granted.sort()).toEqual([1, 2]);
    // The writer's deletion went to the two readers it admitted, to nobody else.
    await until(async () => (await eventsSent()) - sent === 2, 'the wake-ups of the writer’s release');
    expect(first.fencingToken).toBeGreaterThan(writer.fencingToken);
    expect(second.fencingToken).toBeGreaterThan(writer.fencingToken);
    // Readers that came after the waiting writer stay out while readers hold (writer-preferring).
    expect(await apps[4]!.locks.tryAcquire('rw', { mode: 'read' })).toBeNull();

    sent = await eventsSent();
    await first.release(); // the writer waits for the last reader before it, not this one
    await second.release();
    const written = await w3;
    expect(granted).toEqual([1, 2, 3]);
    await until(async () => (await eventsSent()) - sent === 1, 'the wake-up of the last reader’s release');
    expect(written.fencingToken).toBeGreaterThan(Math.max(first.fencingToken, second.fencingToken));

    await written.release();
    const late = await Promise.all([r4, r5]);
    expect(granted.slice(3).sort()).toEqual([4, 5]);
    for (const lease of late) expect(lease.fencingToken).toBeGreaterThan(written.fencingToken);
    await Promise.all(late.map((lease) => lease.release()));
    expect(await holders('rw')).toEqual([]);
  });

  it('grants permits first come first served, each release waking the next waiter and, through its mark, the one behind it', async () => {
    const granted: number[] = [];
    const held = await Promise.all([apps[0]!.locks.acquire('partner', { permits: 2 }), apps[1]!.locks.acquire('partner', { permits: 2 })]);
    const waiting = [
      ...(await queued('partner', 2, { permits: 2 }, granted)),
      ...(await queued('partner', 3, { permits: 2 }, granted)),
      ...(await queued('partner', 4, { permits: 2 }, granted)),
    ];
    await until(async () => (await cluster.metric(cluster.members[0]!, WATCHERS)) === 3, 'every waiter watches');
    const leases = [...held];
    for (let next = 0; next < waiting.length; next++) {
      const sent = await eventsSent();
      await leases[next]!.release();
      const lease = await waiting[next]!;
      leases.push(lease);
      expect(granted).toEqual([2, 3, 4].slice(0, next + 1));
      // The deletion to the first waiter; its mark to the waiter right behind it, if any.
      await until(async () => (await eventsSent()) - sent === (next < waiting.length - 1 ? 2 : 1), 'the wake-ups of one release');
      expect(lease.fencingToken).toBeGreaterThan(Math.max(...leases.slice(0, -1).map((l) => l.fencingToken)));
    }
    expect((await apps[5]!.store.list('partner')).map((lock) => lock.holder)).toEqual(['app-3', 'app-4']);
    await Promise.all(leases.slice(-2).map((lease) => lease.release()));
  });

  it('queues plain locks and shaped ones of one key in one order, and a waiter that gives up lets those behind it in', async () => {
    const granted: number[] = [];
    const plain = await apps[0]!.locks.acquire('mixed');
    const [reader] = await queued('mixed', 1, { mode: 'read' }, granted);
    const gaveUp = new AbortController();
    const writer = apps[2]!.locks.acquire('mixed', { mode: 'write', waitMs: 60_000, signal: gaveUp.signal });
    await until(async () => (await holders('mixed')).length === 3, 'the writer queued');
    const [lateReader] = await queued('mixed', 3, { mode: 'read' }, granted);
    const [secondPlain] = await queued('mixed', 4, {}, granted);
    // A single attempt of any shape never gets ahead of the queue, and leaves nothing in it.
    expect(await apps[5]!.locks.tryAcquire('mixed', { mode: 'read' })).toBeNull();
    expect(await holders('mixed')).toEqual(['app-0', 'app-1', 'app-2', 'app-3', 'app-4']);

    await plain.release();
    const first = await reader;
    expect(granted).toEqual([1]);
    gaveUp.abort(new Error('the caller gave up'));
    await expect(writer).rejects.toThrow('the caller gave up');
    // The writer's key went with its lease: the reader behind it shares the lock with the first one.
    const second = await lateReader;
    expect(granted).toEqual([1, 3]);
    expect(await holders('mixed')).toEqual(['app-1', 'app-3', 'app-4']);
    await first.release();
    await second.release();
    const last = await secondPlain;
    expect(last.fencingToken).toBeGreaterThan(second.fencingToken);
    await last.release();
  });
});
