import { randomUUID } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import type { LockShape, QueuedAcquireOutcome, QueuedAcquireRequest } from '../../lib/index';
import { createEtcdLockStore } from '../../lib/stores/etcd/etcd-client.factory';
import type { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock.store';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { testPrefix } from '../support/test-prefix';
import { EtcdTap, isAcquire, openObserver, queueOf } from './etcd-test-support';

/**
 * A waiter whose etcd lease ran out before its key was put (an outage longer than its lease, between the
 * lease's grant and the enqueue) cannot put that key at all: etcd refuses a put onto a lease it no longer
 * has. It must join again on a new lease, as a waiter whose key went with its lease does.
 */
describe('etcd: a waiter whose lease ran out before its enqueue landed', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let tap: EtcdTap;
  let store: EtcdLockStore;

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    tap = new EtcdTap(cluster);
    store = await createEtcdLockStore(tap.client, { keyPrefix: prefix, commandTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await store?.close();
    tap?.close();
    observer?.close();
    await cluster?.stop();
  });

  it.each<[string, LockShape | undefined]>([
    ['plain', undefined],
    ['read', { mode: 'read' }],
  ])('joins again on a new lease and is granted (%s)', async (name, shape) => {
    const key = `lost-${name}`;
    const holder = randomUUID();
    expect(await store.acquire(key, holder, 10_000, 'holder')).toMatchObject({ acquired: true });
    const enqueue = tap.pauseBefore('txn', isAcquire);
    const token = randomUUID();
    const request: QueuedAcquireRequest = { key, token, leaseMs: 10_000, holder: 'waiter', deadline: Date.now() + 5_000 };
    const waiting: Promise<QueuedAcquireOutcome> = shape ? store.acquireSharedQueued(request, shape) : store.acquireQueued(request);
    // What an outage longer than the lease does to it, done at once: the lease is gone when the put arrives.
    const put = (await enqueue.reached).success!.find((op) => op.request_put)!.request_put!;
    await observer.leaseClient.leaseRevoke({ ID: put.lease! });
    enqueue.send();
    expect(await store.release(key, holder, 0)).toBe(true);
    const outcome = await waiting;
    expect(outcome.result).toMatchObject({ acquired: true });
    expect((await queueOf(observer, prefix, key)).map((entry) => entry.holder)).toEqual(['waiter']);
    expect(await store.release(key, token, 0)).toBe(true);
  });
});
