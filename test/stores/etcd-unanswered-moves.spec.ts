import { randomUUID } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { LockNotAcquiredError, LockStoreUnavailableError } from '../../lib/index';
import { createEtcdLockStore } from '../../lib/stores/etcd/etcd-client.factory';
import { EtcdKeyLayout } from '../../lib/stores/etcd/etcd-key-layout';
import type { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock.store';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { EtcdTap, isLeaseMove, openObserver, pollUntil } from './etcd-test-support';

/**
 * `extend(ms)` moves the holder's key to a new etcd lease. When the move's answer never comes back (it
 * landed, but the reply was late), the key may be on either lease: the store must find out which, never
 * revoke the new lease blindly (that deletes a key the holder still believes it holds, and hands it to
 * someone else), and never take a key on a lease it does not keep alive for its own.
 */
describe('etcd: lease moves whose answer came too late', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let tap: EtcdTap;
  const apps: LockApp[] = [];
  const stores: EtcdLockStore[] = [];

  const ownerOf = async (key: string) => {
    const { key: start, range_end } = new EtcdKeyLayout(prefix).lockRange(key);
    const reply = await observer.kv.range({ key: start, range_end, sort_order: 'Ascend', sort_target: 'Create', limit: 1 });
    return reply.kvs[0];
  };
  /** The application under test talks to etcd through the tap; the other one directly. */
  const openApps = async (): Promise<[LockApp, LockApp]> => {
    const a = await createLockApp({ store: 'etcd', etcd: tap.client, keyPrefix: prefix, commandTimeoutMs: 300, holder: 'A' });
    const b = await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: 'B' });
    apps.push(a, b);
    return [a, b];
  };
  const openStores = async (): Promise<[EtcdLockStore, EtcdLockStore]> => {
    const a = await createEtcdLockStore(tap.client, { keyPrefix: prefix, commandTimeoutMs: 300 });
    const b = await createEtcdLockStore(cluster.endpoints, { keyPrefix: prefix, commandTimeoutMs: 5_000 });
    stores.push(a, b);
    return [a, b];
  };

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    tap = new EtcdTap(cluster);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await Promise.all(stores.map((store) => store.close()));
    tap.close();
    observer.close();
    await cluster.stop();
  });

  it('keeps an extend whose answer came too late but landed: the holder alone holds the key, on the lease it asked for', async () => {
    const [a, b] = await openApps();
    const lease = await a.locks.acquire('extended', { leaseMs: 4_000 });
    const late = tap.holdReplyTo(isLeaseMove);
    const extended = await lease.extend(8_000).then(() => 'extended', (error: Error) => error.message);
    await late.landed;
    late.deliver();
    await tap.revokesAnswered();

    // The holder still believes it holds the key: nobody else may get it.
    expect(lease.held).toBe(true);
    await expect(b.locks.acquire('extended', { waitMs: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    // Where the key went was read at once: the extension is known to have happened.
    expect(extended).toBe('extended');
    const owner = await ownerOf('extended');
    expect(Number(owner!.create_revision)).toBe(lease.fencingToken);
    expect((await observer.leaseClient.leaseTimeToLive({ ID: owner!.lease })).grantedTTL).toBe('8');

    await lease.release();
    const next = await b.locks.acquire('extended', { waitMs: 0 });
    expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
    await next.release();
    // Neither the old lease nor the adopted one is left behind.
    await pollUntil(async () => (await observer.leaseClient.leaseLeases()).leases.length === 0, 'every lease is revoked');
  });

  it('settles an unanswered extend at the next renewal when etcd could not say at once where the key went', async () => {
    const [a, b] = await openApps();
    const lease = await a.locks.acquire('unsettled', { leaseMs: 4_000 });
    const late = tap.holdReplyTo(isLeaseMove);
    tap.failReads(1);
    await expect(lease.extend(8_000)).rejects.toBeInstanceOf(LockStoreUnavailableError);
    await late.landed;
    late.deliver();
    await tap.revokesAnswered();

    // The watchdog goes on with the length the failed extend left (4 s); its next renewal finds the key
    // on the new lease, adopts it, and moves the key to a lease of the length it asks for.
    const outcome = await Promise.race([
      a.next('renewed', (e) => e.key === 'unsettled').then(() => 'renewed'),
      a.next('lost', (e) => e.key === 'unsettled').then((e) => `lost (${e.reason})`),
    ]);
    expect(outcome).toBe('renewed');
    expect(lease.held).toBe(true);
    await expect(b.locks.acquire('unsettled', { waitMs: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    const owner = await ownerOf('unsettled');
    expect((await observer.leaseClient.leaseTimeToLive({ ID: owner!.lease })).grantedTTL).toBe('4');

    await lease.release();
    const next = await b.locks.acquire('unsettled', { waitMs: 0 });
    expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
    await next.release();
  });

  it('reports a release as not its own when the key an unanswered move put on the new lease was force-released and taken', async () => {
    const [a, b] = await openStores();
    const tokenA = randomUUID();
    expect(await a.acquire('taken', tokenA, 4_000, 'A')).toMatchObject({ acquired: true });
    const late = tap.holdReplyTo(isLeaseMove);
    tap.failReads(1);
    const [extended] = await a.renew([{ key: 'taken', token: tokenA, leaseMs: 8_000 }]);
    expect(extended).toBeInstanceOf(LockStoreUnavailableError);
    await late.landed;
    late.deliver();
    await tap.revokesAnswered();

    // The operator revokes the lease the key is on (the new one); the old lease still lives.
    await b.forceRelease('taken');
    const tokenB = randomUUID();
    const taken = await b.acquire('taken', tokenB, 4_000, 'B');
    expect(taken).toMatchObject({ acquired: true });
    expect(await a.release('taken', tokenA, 0)).toBe(false);
    expect(await b.inspect('taken')).toMatchObject({ holder: 'B', fencingToken: (taken as { fencingToken: number }).fencingToken });
    expect(await b.release('taken', tokenB, 0)).toBe(true);
  });

  it('reports a renewal lost when its key no longer sits on the lease the holder keeps alive', async () => {
    const [a] = await openStores();
    const token = randomUUID();
    expect(await a.acquire('moved', token, 4_000, 'A')).toMatchObject({ acquired: true });
    const owner = await ownerOf('moved');
    const foreign = await observer.leaseClient.leaseGrant({ TTL: 60 });
    // Same key, same create revision (a put keeps it), but on a lease the holder knows nothing of.
    await observer.kv.put({ key: owner!.key, value: owner!.value, lease: foreign.ID });
    try {
      expect(await a.renew([{ key: 'moved', token, leaseMs: 4_000 }])).toEqual([false]);
    } finally {
      await observer.leaseClient.leaseRevoke({ ID: foreign.ID });
    }
  });
});
