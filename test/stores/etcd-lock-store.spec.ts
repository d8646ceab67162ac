import { randomUUID } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { LockConfigError, LockStoreUnavailableError } from '../../lib/index';
import { createEtcdLockStore } from '../../lib/stores/etcd/etcd-client.factory';
import type { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock.store';
import { EtcdKeyLayout } from '../../lib/stores/etcd/etcd-key-layout';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createLockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { EtcdTap, isAcquire, openObserver, queueOf, pollUntil } from './etcd-test-support';

/** A stock-timed member (election 1 s): it grants no lease shorter than 2 s. */
describe('EtcdLockStore against a real etcd', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let endpoint: string;
  const stores: EtcdLockStore[] = [];
  const openStore = async (commandTimeoutMs = 5_000): Promise<EtcdLockStore> => {
    const store = await createEtcdLockStore(cluster.endpoints, { keyPrefix: prefix, commandTimeoutMs });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    endpoint = cluster.endpoints[0]!.replace('http://', '');
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    observer.close();
    await cluster.stop();
  });
  afterEach(() => cluster.members[0]!.resume());

  it('refuses a leaseMs below what the server grants with a LockConfigError naming the minimum and the endpoint, leaving no key', async () => {
    const store = await openStore();
    const subSecond = await store.acquire('short', randomUUID(), 500, 'test').catch((error: unknown) => error);
    expect(subSecond).toBeInstanceOf(LockConfigError);
    expect((subSecond as LockConfigError).option).toBe('leaseMs');
    expect((subSecond as Error).message).toContain('at least 1000 ms');

    // One second is etcd's granularity, but this server's minimum is 2 s: learnt from the first grant.
    const belowMinimum = await store.acquire('short', randomUUID(), 1_000, 'test').catch((error: unknown) => error);
    expect(belowMinimum).toBeInstanceOf(LockConfigError);
    expect((belowMinimum as Error).message).toContain('at least 2000 ms');
    expect((belowMinimum as Error).message).toContain(endpoint);
    await expect(
      store.acquireQueued({ key: 'short', token: randomUUID(), leaseMs: 2_000, holder: 'test', deadline: Date.now() + 1_000 }),
    ).resolves.toMatchObject({ result: { acquired: true } });
    await expect(
      store.acquireQueued({ key: 'short2', token: randomUUID(), leaseMs: 1_000, holder: 'test', deadline: Date.now() + 1_000 }),
    ).rejects.toBeInstanceOf(LockConfigError);
    expect(await store.inspect('short2')).toBeNull();
  });

  it('rounds leaseMs up to whole seconds, so the etcd lease outlasts the library’s own deadline', async () => {
    const store = await openStore();
    await store.acquire('rounded', randomUUID(), 2_500, 'test');
    const { key, range_end } = new EtcdKeyLayout(prefix).lockRange('rounded');
    const [owner] = (await observer.kv.range({ key, range_end })).kvs;
    expect((await observer.leaseClient.leaseTimeToLive({ ID: owner!.lease })).grantedTTL).toBe('3');
    expect((await store.inspect('rounded'))!.ttlMs).toBeLessThanOrEqual(2_500);
  });

  it('fails closed when etcd stops answering, naming the endpoint and the timeout but never the credentials', async () => {
    // Stopped before the client exists: its authentication call, sent as soon as it can be, gets no answer
    // either (answered, it would fail the acquire with etcd's own refusal instead; seen in CI).
    cluster.members[0]!.pause();
    const store = await createEtcdLockStore(
      { hosts: cluster.endpoints, auth: { username: 'locks', password: 'not-to-be-printed' } },
      { keyPrefix: prefix, commandTimeoutMs: 300 },
    );
    stores.push(store);
    const error = await store.acquire('stalled', randomUUID(), 10_000, 'test').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockStoreUnavailableError);
    expect((error as Error).message).toContain(endpoint);
    expect((error as Error).message).toContain('no answer within 300 ms');
    expect((error as Error).message).not.toContain('not-to-be-printed');
  });

  it('undoes an acquire whose answer never came: its lease is revoked, with any key it wrote, once etcd answers again', async () => {
    const member = cluster.members[0]!;
    let stallNextTxn = false;
    // Network-fault injection: the member freezes right when the acquire transaction is sent.
    const client = new Etcd3({
      hosts: cluster.endpoints,
      defaultCallOptions: (context) => {
        if (stallNextTxn && context.method === 'txn') {
          stallNextTxn = false;
          member.pause();
        }
        return {};
      },
    });
    const store = await createEtcdLockStore(client, { keyPrefix: prefix, commandTimeoutMs: 300 });
    stores.push(store);
    const leasesBefore = new Set((await observer.leaseClient.leaseLeases()).leases.map((lease) => lease.ID));
    stallNextTxn = true;
    // A two-minute lease: if nothing undid the attempt, the key would outlive this test.
    const error = await store.acquire('unknown', randomUUID(), 120_000, 'test').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockStoreUnavailableError);
    const [attempt] = (await Promise.all([observer.leaseClient.leaseLeases(), member.resume()]))[0].leases.filter(
      (lease) => !leasesBefore.has(lease.ID),
    );
    expect(attempt).toBeDefined();
    await pollUntil(async () => (await observer.leaseClient.leaseTimeToLive({ ID: attempt!.ID })).TTL === '-1', 'the attempt’s lease is revoked');
    expect(await queueOf(observer, prefix, 'unknown')).toEqual([]);
    // etcd3's circuit breaker keeps failing fast for a few seconds after the failures; then the key is free.
    await pollUntil(
      () => store.acquire('unknown', randomUUID(), 10_000, 'test').then((result) => result.acquired, () => false),
      'the key is granted again',
    );
    client.close();
  });

  it('ends a waiting acquisition at once when its application closes, and takes its waiter key along', async () => {
    const holder = await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: 'holder' });
    const waiter = await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: 'waiter' });
    try {
      const held = await holder.locks.acquire('closing');
      // Two minutes to wait: only the close can end it within this test.
      const waiting = waiter.locks.acquire('closing', { waitMs: 120_000 }).catch((error: unknown) => error);
      await pollUntil(async () => (await queueOf(observer, prefix, 'closing')).length === 2, 'the waiter queued');
      await waiter.close();
      expect(await waiting).toBeInstanceOf(LockStoreUnavailableError);
      await pollUntil(async () => (await queueOf(observer, prefix, 'closing')).length === 1, 'the waiter key is gone');
      await held.release();
    } finally {
      await holder.close();
    }
  });

  it.each([
    ['plain lock', (store: EtcdLockStore, key: string) => store.acquire(key, randomUUID(), 10_000, 'late')],
    ['reader', (store: EtcdLockStore, key: string) => store.acquireShared(key, { mode: 'read' }, randomUUID(), 10_000, 'late')],
    ['writer', (store: EtcdLockStore, key: string) => store.acquireShared(key, { mode: 'write' }, randomUUID(), 10_000, 'late')],
  ])('closes only once a single attempt in flight has its answer, and gives back a %s it granted meanwhile', async (name, attempt) => {
    const key = `closing-${name.replace(/ /g, '-')}`;
    const tap = new EtcdTap(cluster);
    try {
      const store = await createEtcdLockStore(tap.client, { keyPrefix: prefix, commandTimeoutMs: 5_000 });
      // The attempt's put lands; its answer is on its way back when the store closes.
      const reply = tap.holdReplyTo((request) => isAcquire(request) || (request.compare ?? []).length === 2);
      const attempted = attempt(store, key);
      await reply.landed;
      const closed = store.close();
      reply.deliver();
      await expect(attempted).rejects.toBeInstanceOf(LockStoreUnavailableError);
      await closed;
      expect(await queueOf(observer, prefix, key)).toEqual([]);
    } finally {
      tap.close();
    }
  });

  it('leaves a reused Etcd3 client open when the application closes', async () => {
    const client = new Etcd3({ hosts: cluster.endpoints });
    const app = await createLockApp({ store: 'etcd', etcd: client, keyPrefix: prefix });
    const lease = await app.locks.acquire('reused');
    await lease.release();
    await app.close();
    await expect(client.get('anything').string()).resolves.toBeNull();
    client.close();
  });
});
