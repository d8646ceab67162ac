import { randomUUID } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { createEtcdLockStore } from '../../lib/stores/etcd/etcd-client.factory';
import type { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock.store';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { recordWarnings } from '../support/process-warnings';
import { testPrefix } from '../support/test-prefix';
import { openObserver, pollUntil, queueOf } from './etcd-test-support';
import { expectCloseToEndEveryWait, expectManyWaitersWithoutWarning, MANY_WAITERS } from './many-waiters.scenarios';

/**
 * Many waiters of one key in one process, more than Node's limit of 10 listeners on one signal before it
 * warns of a leak: what each of them adds to what the store shares between them (as on ZooKeeper,
 * zookeeper-many-waiters.spec.ts).
 */
describe('etcd: many waiters of one key in one process', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let store: EtcdLockStore;
  const queueLength = async (key: string): Promise<number> => (await queueOf(observer, prefix, key)).length;
  const open = () => createEtcdLockStore(cluster.endpoints, { keyPrefix: prefix, commandTimeoutMs: 5_000 });

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    store = await open();
  });
  afterAll(async () => {
    await store?.close();
    observer?.close();
    await cluster?.stop();
  });

  it('lets more than ten waiters wait at once without a MaxListenersExceededWarning: none listens on a signal the store shares', async () => {
    await expectManyWaitersWithoutWarning({ store, queueLength }, 'crowd');
  });

  it('lets more than ten readers wait behind a writer without a warning, and each reader that gives up stops listening', async () => {
    const key = 'readers';
    const writer = randomUUID();
    expect(await store.acquireShared(key, { mode: 'write' }, writer, 10_000, 'writer')).toMatchObject({ acquired: true });
    const warnings = recordWarnings();
    const gaveUp = Array.from({ length: MANY_WAITERS }, () => new AbortController());
    const readers = gaveUp.map((controller, i) =>
      store.acquireSharedQueued(
        { key, token: randomUUID(), leaseMs: 10_000, holder: `reader-${i}`, deadline: Date.now() + 60_000, signal: controller.signal },
        { mode: 'read' },
      ),
    );
    await pollUntil(async () => (await queueLength(key)) === MANY_WAITERS + 1, 'every reader queued');
    for (const controller of gaveUp) controller.abort(new Error('gave up'));
    for (const reader of readers) await expect(reader).rejects.toThrow('gave up');
    await pollUntil(async () => (await queueLength(key)) === 1, 'every reader left the queue');
    expect(await store.release(key, writer, 0)).toBe(true);
    expect(await warnings.stop()).toEqual([]);
  });

  it('ends every wait at once when the store closes, with or without a signal of its own, and refuses one started after', async () => {
    await expectCloseToEndEveryWait({ store: await open(), queueLength }, 'closing');
  });
});
