import { randomUUID } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { createEtcdLockStore } from '../../lib/stores/etcd/etcd-client.factory';
import type { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock.store';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { testPrefix } from '../support/test-prefix';
import { EtcdTap, openObserver, queueOf, pollUntil } from './etcd-test-support';

/** Keys per page of the runbook's listing (owners.query.ts). */
const PAGE = 1_000;

/**
 * The runbook's `list` reads a prefix page by page; every page must show the same moment, or a queue cut
 * by a page boundary is put together from two states that never were one.
 */
describe('etcd: the runbook lists the queues as they were at one revision', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let tap: EtcdTap;
  let store: EtcdLockStore;
  let operator: EtcdLockStore;

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    tap = new EtcdTap(cluster);
    store = await createEtcdLockStore(cluster.endpoints, { keyPrefix: prefix, commandTimeoutMs: 5_000 });
    operator = await createEtcdLockStore(tap.client, { keyPrefix: prefix, commandTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await store.close();
    await operator.close();
    tap.close();
    observer.close();
    await cluster.stop();
  });

  it('never shows a waiter as a holder when keys joined between two pages of the listing', async () => {
    // Keys that are no lock's, sorting before lock `b`: the first page ends with b's first key.
    const fillers = Array.from({ length: PAGE - 1 }, (_, i) => `${prefix}a\u0000filler-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < fillers.length; i += 100) {
      await observer.kv.txn({ compare: [], success: fillers.slice(i, i + 100).map((key) => ({ request_put: { key: Buffer.from(key), value: Buffer.from('x') } })) });
    }
    const reader = randomUUID();
    expect(await store.acquireShared('b', { mode: 'read' }, reader, 10_000, 'reader')).toMatchObject({ acquired: true });
    // A lock after `b`: the listing has a second page to read.
    const other = randomUUID();
    expect(await store.acquire('c', other, 10_000, 'other')).toMatchObject({ acquired: true });

    const secondPage = tap.pauseBefore('range', (request) => !Buffer.from(request.key!).equals(Buffer.from(prefix)));
    const listed = operator.list('b');
    await secondPage.reached;
    // Between the pages: a plain waiter queues behind the reader (its key sorts before the reader's, in
    // the first page's part), then a reader behind the plain waiter (its key sorts after: the second page).
    const gaveUp = new AbortController();
    const request = (holder: string) => ({ key: 'b', token: randomUUID(), leaseMs: 10_000, holder, deadline: Date.now() + 60_000, signal: gaveUp.signal });
    const plain = store.acquireQueued(request('plain')).catch(() => undefined);
    await pollUntil(async () => (await queueOf(observer, prefix, 'b')).length === 2, 'the plain waiter queued');
    const late = store.acquireSharedQueued(request('late reader'), { mode: 'read' }).catch(() => undefined);
    await pollUntil(async () => (await queueOf(observer, prefix, 'b')).length === 3, 'the late reader queued');
    secondPage.send();
    try {
      // At the first page's revision the reader held alone; at the second one it still does, and the late
      // reader waits behind the plain waiter.
      expect((await listed).map((lock) => lock.holder)).toEqual(['reader']);
    } finally {
      gaveUp.abort();
      await Promise.all([plain, late]);
      expect(await store.release('b', reader, 0)).toBe(true);
      expect(await store.release('c', other, 0)).toBe(true);
      await observer.delete().prefix(`${prefix}a\u0000`);
    }
  });
});
