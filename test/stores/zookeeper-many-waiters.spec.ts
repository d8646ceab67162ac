import { randomUUID } from 'node:crypto';
import { createZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-client.factory';
import { ZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-lock.store';
import { loadZookeeper } from '../../lib/stores/zookeeper/zookeeper.loader';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { recordWarnings } from '../support/process-warnings';
import { testPrefix } from '../support/test-prefix';
import { watches, ZookeeperTap } from './zookeeper-tap';
import { openObserver, queueOf, pollUntil, type ZookeeperObserver } from './zookeeper-test-support';
import { expectCloseToEndEveryWait, expectManyWaitersWithoutWarning, MANY_WAITERS } from './many-waiters.scenarios';

/**
 * Many waiters of one key in one process, more than Node's limit of 10 listeners on one emitter or
 * signal before it warns of a leak: what each of them adds to what the store shares between them.
 */
describe('ZooKeeper: many waiters of one key in one process', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let observer: ZookeeperObserver;
  let store: ZookeeperLockStore;
  let tap: ZookeeperTap;
  /** On a client whose requests the tap counts. */
  let tapped: ZookeeperLockStore;
  const queueLength = async (key: string): Promise<number> => (await queueOf(observer, prefix, key)).length;
  /** The listeners the tapped store's waiters keep on its session's watches now (see DataWatchHub). */
  const listeners = async (): Promise<number> => {
    const context = tapped['context'];
    return context.watchesOn(await context.sessions.sessionFor(10_000)).listeners;
  };

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    observer = await openObserver(ensemble);
    const settings = { keyPrefix: prefix, commandTimeoutMs: 5_000, sessionTimeoutMs: 10_000 };
    store = await createZookeeperLockStore(ensemble.connect, settings);
    tap = new ZookeeperTap(await loadZookeeper());
    tapped = new ZookeeperLockStore(tap.zookeeper, { ...settings, connect: ensemble.connect });
  });
  afterAll(async () => {
    await Promise.all([store, tapped].map((each) => each?.close()));
    await observer?.close();
    await ensemble?.stop();
  });

  it('lets more than ten waiters wait at once without a MaxListenersExceededWarning: none listens on a signal the store shares', async () => {
    await expectManyWaitersWithoutWarning({ store, queueLength }, 'crowd');
  });

  it('ends every wait at once when the store closes, with or without a signal of its own, and refuses one started after', async () => {
    const closing = await createZookeeperLockStore(ensemble.connect, { keyPrefix: prefix, commandTimeoutMs: 5_000, sessionTimeoutMs: 10_000 });
    await expectCloseToEndEveryWait({ store: closing, queueLength }, 'closing');
  });

  it('has the waiters of one process on one node share one watch: one request sets it, and a waiter that ends stops listening', async () => {
    const key = 'readers';
    const writer = randomUUID();
    expect(await tapped.acquireShared(key, { mode: 'write' }, writer, 10_000, 'writer')).toMatchObject({ acquired: true });
    const path = (await queueOf(observer, prefix, key))[0]!.path;
    const looks = tap.count((request) => request.call === 'getChildren' && request.path === path.slice(0, path.lastIndexOf('/')));
    const watchesOfWriter = tap.count(watches(path));
    const warnings = recordWarnings();
    const gaveUp = Array.from({ length: MANY_WAITERS }, () => new AbortController());
    const readers = gaveUp.map((controller, i) =>
      tapped.acquireSharedQueued(
        { key, token: randomUUID(), leaseMs: 10_000, holder: `reader-${i}`, deadline: Date.now() + 60_000, signal: controller.signal },
        { mode: 'read' },
      ),
    );
    // Every reader read the queue (its join) and, behind the writer, waits for the writer's node to go.
    await pollUntil(async () => looks.answered >= MANY_WAITERS, 'every reader looked at the queue');
    expect(watchesOfWriter.sent).toBe(1);
    await pollUntil(async () => watchesOfWriter.answered === 1, 'the watch is set');
    expect((await ensemble.members[0]!.watchesByPath()).get(path)).toHaveLength(1);
    expect(tap.dataWatchersOf(path)).toBe(1);
    expect(await listeners()).toBe(MANY_WAITERS);
    for (const controller of gaveUp) controller.abort(new Error('gave up'));
    for (const reader of readers) await expect(reader).rejects.toThrow('gave up');
    // The writer holds on: nothing of the readers stays behind for as long as it does.
    expect(await listeners()).toBe(0);
    expect(tap.dataWatchersOf(path)).toBe(1);
    expect(await tapped.release(key, writer, 0)).toBe(true);
    await pollUntil(async () => tap.dataWatchersOf(path) === 0, 'the watch fired at the deletion');
    expect(await warnings.stop()).toEqual([]);
  });
});
