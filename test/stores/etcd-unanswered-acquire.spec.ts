import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3 } from 'etcd3';
import { LockStoreUnavailableError } from '../../lib/index';
import { createEtcdLockStore } from '../../lib/stores/etcd/etcd-client.factory';
import { EtcdKeyLayout } from '../../lib/stores/etcd/etcd-key-layout';
import type { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock.store';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { testPrefix } from '../support/test-prefix';
import { EtcdTap, isAcquire, openObserver, pollUntil } from './etcd-test-support';

/**
 * An acquisition whose answer never came may have put its key: the store revokes that lease, and keeps
 * sending the revoke through an outage. A new etcd leader gives every lease its full TTL again (so that an
 * election never expires a live lease), so such a lease can outlive the TTL it was granted with, by one TTL
 * per election: a clean-up that gave up "when the lease would have run out by itself" left the key held by
 * nobody until then. (Found by the torture run: etcd seed 1, 30 minutes, 38 (d) lines around leader kills.)
 */
describe('etcd: an acquisition whose answer came too late', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let tap: EtcdTap;
  let store: EtcdLockStore;

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    tap = new EtcdTap(cluster);
    store = await createEtcdLockStore(tap.client, { keyPrefix: prefix, commandTimeoutMs: 300 });
  });
  afterAll(async () => {
    await store?.close();
    tap?.close();
    observer?.close();
    await cluster?.stop();
  });

  it('revokes its lease once etcd answers again, even after the lease outlived the TTL it was granted with', async () => {
    const { key: start, range_end } = new EtcdKeyLayout(prefix).lockRange('late');
    const late = tap.holdReplyTo(isAcquire);
    tap.refuseRevokes(true);
    const sentAt = Date.now();
    await expect(store.acquire('late', randomUUID(), 2_000, 'A')).rejects.toBeInstanceOf(LockStoreUnavailableError);
    await late.landed;
    const [orphan] = (await observer.kv.range({ key: start, range_end })).kvs;
    expect(orphan).toBeDefined();

    // What an election does to the lease, done by hand: keep it alive from elsewhere, past its granted
    // TTL, while etcd stays out of the store's reach.
    const refresh = await observer.leaseClient.leaseKeepAlive();
    refresh.on('error', () => undefined);
    const timer = setInterval(() => refresh.write({ ID: orphan!.lease }), 300);
    try {
      // The condition is time itself: the lease's granted TTL (2 s) is over, with the retry's longest
      // backoff (1 s) on top.
      await sleep(Math.max(0, sentAt + 3_500 - Date.now()));
      expect(Number((await observer.leaseClient.leaseTimeToLive({ ID: orphan!.lease })).TTL)).toBeGreaterThan(0);
      tap.refuseRevokes(false);
      late.deliver();
      await pollUntil(async () => (await observer.kv.range({ key: start, range_end })).kvs.length === 0, 'the orphaned key is gone', 10_000);
    } finally {
      clearInterval(timer);
      refresh.end();
      await observer.leaseClient.leaseRevoke({ ID: orphan!.lease }).catch(() => undefined);
    }
  });
});
