import { randomUUID } from 'node:crypto';
import { createZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-client.factory';
import type { ZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-lock.store';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { recordWarnings } from '../support/process-warnings';
import { testPrefix } from '../support/test-prefix';
import { openObserver, queueOf, until, type ZookeeperObserver } from './zookeeper-test-support';

const WAITERS = 12;

/**
 * Many waiters of one key in one process, more than Node's limit of 10 listeners on one emitter or
 * signal before it warns of a leak: what each of them adds to what the store shares between them.
 */
describe('ZooKeeper: many waiters of one key in one process', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let observer: ZookeeperObserver;
  let store: ZookeeperLockStore;
  const queueLength = async (key: string): Promise<number> => (await queueOf(observer, prefix, key)).length;

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    observer = await openObserver(ensemble);
    store = await createZookeeperLockStore(ensemble.connect, { keyPrefix: prefix, commandTimeoutMs: 5_000, sessionTimeoutMs: 10_000 });
  });
  afterAll(async () => {
    await store?.close();
    await observer?.close();
    await ensemble?.stop();
  });

  it('lets more than ten waiters wait at once without a MaxListenersExceededWarning: none listens on a signal the store shares', async () => {
    const key = 'crowd';
    const holder = randomUUID();
    expect(await store.acquire(key, holder, 10_000, 'holder')).toMatchObject({ acquired: true });
    const warnings = recordWarnings();
    // Half bring a signal of their own (as LockService's waits do), half none.
    const waits = Array.from({ length: WAITERS }, (_, i) => {
      const token = randomUUID();
      const signal = i % 2 === 0 ? new AbortController().signal : undefined;
      return store
        .acquireQueued({ key, token, leaseMs: 10_000, holder: `waiter-${i}`, deadline: Date.now() + 60_000, signal })
        .then(({ result }) => result.acquired && store.release(key, token, 0));
    });
    await until(async () => (await queueLength(key)) === WAITERS + 1, 'every waiter queued');
    expect(await store.release(key, holder, 0)).toBe(true);
    expect(await Promise.all(waits)).toEqual(Array.from({ length: WAITERS }, () => true));
    expect(await warnings.stop()).toEqual([]);
  });
});
