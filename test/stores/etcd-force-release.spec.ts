import { randomUUID } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { createEtcdLockStore } from '../../lib/stores/etcd/etcd-client.factory';
import type { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock.store';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { testPrefix } from '../support/test-prefix';
import { EtcdTap, openObserver, queueOf, pollUntil } from './etcd-test-support';

/**
 * The runbook's force-release takes the holder the operator looked at, never one granted after: with a
 * fencing token that is the token's grant; without one, the owner the call itself saw first.
 */
describe('etcd: force-release takes only the holder it meant', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let tap: EtcdTap;
  const stores: EtcdLockStore[] = [];
  const open = async (client: Etcd3 | string[]): Promise<EtcdLockStore> => {
    const store = await createEtcdLockStore(client, { keyPrefix: prefix, commandTimeoutMs: 5_000 });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    tap = new EtcdTap(cluster);
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    tap.close();
    observer.close();
    await cluster.stop();
  });

  it('leaves the next holder alone when the owner it meant ran out between the look and the revoke', async () => {
    const a = await open(cluster.endpoints);
    const b = await open(cluster.endpoints);
    const operator = await open(tap.client);
    expect(await a.acquire('k', randomUUID(), 5_000, 'A')).toMatchObject({ acquired: true });
    const tokenB = randomUUID();
    const waiting = b.acquireQueued({ key: 'k', token: tokenB, leaseMs: 5_000, holder: 'B', deadline: Date.now() + 60_000 });
    await pollUntil(async () => (await queueOf(observer, prefix, 'k')).length === 2, 'B is queued behind A');

    // A's lease runs out right after the operator's call read its TTL, before it revokes it.
    tap.afterNextTtlRead((leaseId) => observer.leaseClient.leaseRevoke({ ID: leaseId }));
    expect(await operator.forceRelease('k')).toEqual({ released: false, reason: 'not-held' });

    const granted = await waiting;
    expect(granted.result).toMatchObject({ acquired: true });
    expect(await operator.inspect('k')).toMatchObject({ holder: 'B', fencingToken: (granted.result as { fencingToken: number }).fencingToken });
    expect(await b.release('k', tokenB, 0)).toBe(true);
  });
});
