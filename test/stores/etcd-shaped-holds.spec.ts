import { randomUUID } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { LockStoreUnavailableError, type LockShape } from '../../lib/index';
import { createEtcdLockStore } from '../../lib/stores/etcd/etcd-client.factory';
import type { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock.store';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { runShapedMethods } from '../support/shaped-methods-app';
import { testPrefix } from '../support/test-prefix';
import { EtcdTap, isAcquire, openObserver, queueOf, pollUntil } from './etcd-test-support';
import { expectChangedPermitsInOrder } from './shaped-queue.scenarios';

type TxnRequest = Parameters<Etcd3['kv']['txn']>[0];

/** A reader's single attempt: its comparisons are the two non-reader ranges, empty. */
const isReaderAttempt = (request: TxnRequest): boolean => (request.compare ?? []).filter((c) => c.target === 'Create' && c.result === 'Equal').length === 2;
/** A permit's single attempt: nothing joined the lock since the queue was read. */
const isPermitAttempt = (request: TxnRequest): boolean => (request.compare ?? []).some((c) => c.target === 'Create' && c.result === 'Less');
/** A transaction that puts a key for `holder`, whatever it compares. */
const putsFor =
  (holder: string) =>
  (request: TxnRequest): boolean =>
    (request.success ?? []).some((op) => op.request_put !== undefined && (JSON.parse(String(op.request_put.value)) as { holder: string }).holder === holder);

describe('etcd: read/write locks and semaphores, each hold its own key', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let tap: EtcdTap;
  let store: EtcdLockStore;
  let impatient: EtcdLockStore;
  /** On the tapped client, with the usual timeout: a reply held back a while is still its caller's answer. */
  let patient: EtcdLockStore;
  const holders = (key: string): Promise<string[]> => queueOf(observer, prefix, key).then((queue) => queue.map((entry) => entry.holder));

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    observer = openObserver(cluster);
    tap = new EtcdTap(cluster);
    store = await createEtcdLockStore(cluster.endpoints, { keyPrefix: prefix, commandTimeoutMs: 5_000 });
    impatient = await createEtcdLockStore(tap.client, { keyPrefix: prefix, commandTimeoutMs: 300 });
    patient = await createEtcdLockStore(tap.client, { keyPrefix: prefix, commandTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await store.close();
    await impatient.close();
    await patient.close();
    tap.close();
    observer.close();
    await cluster.stop();
  });

  it('starts an application whose locked methods read, write and take permits on etcd, and runs them', () =>
    runShapedMethods({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix }, async () => expect(await holders('report:1')).toEqual([])));

  it.each<[string, LockShape, (request: TxnRequest) => boolean]>([
    ['reader', { mode: 'read' }, isReaderAttempt],
    ['permit', { permits: 3 }, isPermitAttempt],
  ])('undoes a %s’s single attempt whose answer came too late: the key it put goes with its lease', async (name, shape, matches) => {
    const key = `late-${name}`;
    const late = tap.holdReplyTo(matches);
    // A two-minute lease: if nothing undid the attempt, its key would outlive this test.
    await expect(impatient.acquireShared(key, shape, randomUUID(), 120_000, 'late')).rejects.toBeInstanceOf(LockStoreUnavailableError);
    await late.landed;
    late.deliver();
    await pollUntil(async () => (await holders(key)).length === 0, 'the late key is gone');
    expect(await store.acquireShared(key, { mode: 'write' }, randomUUID(), 10_000, 'next')).toMatchObject({ acquired: true });
  });

  it('leaves nothing of a writer it turned away, even when the reader left before the denial reached the writer', async () => {
    const reader = randomUUID();
    expect(await store.acquireShared('turned-away', { mode: 'read' }, reader, 10_000, 'reader')).toMatchObject({ acquired: true });
    // The writer asks to keep readers out while it goes on asking (a store used directly, retried by hand).
    const denial = tap.holdReplyTo(isAcquire);
    const writer = patient.acquireShared('turned-away', { mode: 'write', waitingMs: 10_000 }, randomUUID(), 10_000, 'writer');
    await denial.landed;
    expect(await store.release('turned-away', reader, 0)).toBe(true);
    denial.deliver();
    expect(await writer).toMatchObject({ acquired: false });
    // Told "denied", it holds nothing: the next writer gets the lock at once, not when some lease runs out.
    expect(await holders('turned-away')).toEqual([]);
    const next = randomUUID();
    expect(await store.acquireShared('turned-away', { mode: 'write' }, next, 10_000, 'next')).toMatchObject({ acquired: true });
    expect(await store.release('turned-away', next, 0)).toBe(true);
  });

  it.each<[string, (key: string, token: string) => Promise<boolean>]>([
    ['a single attempt', async (key, token) => (await store.acquireShared(key, { permits: 2 }, token, 10_000, 'last')).acquired],
    [
      'a waiter',
      async (key, token) =>
        (await store.acquireSharedQueued({ key, token, leaseMs: 10_000, holder: 'last', deadline: Date.now() + 10_000 }, { permits: 2 })).result.acquired,
    ],
  ])('turns a permit’s single attempt away when %s took the last permit between its read of the queue and its put: never N + 1 holders', async (name, takeLast) => {
    const key = `raced-${name.replace(/ /g, '-')}`;
    const [first, last] = [randomUUID(), randomUUID()];
    expect(await store.acquireShared(key, { permits: 2 }, first, 10_000, 'first')).toMatchObject({ acquired: true });
    // The attempt read the queue (one holder of two) and is on its way to put its key.
    const put = tap.pauseBefore('txn', putsFor('raced'));
    const attempt = patient.acquireShared(key, { permits: 2 }, randomUUID(), 10_000, 'raced');
    await put.reached;
    expect(await takeLast(key, last)).toBe(true);
    put.send();
    expect(await attempt).toMatchObject({ acquired: false });
    expect(await holders(key)).toEqual(['first', 'last']);
    expect(await store.release(key, first, 0)).toBe(true);
    expect(await store.release(key, last, 0)).toBe(true);
  });

  it.each<[string, LockShape, number]>([
    ['writer', { mode: 'write' }, 1],
    ['reader', { mode: 'read' }, 2],
    ['permit waiter', { permits: 20 }, 2],
  ])('has a %s behind a long queue read at most one key per range it cannot share the lock with, no value, at each look', async (name, shape, ranges) => {
    const key = `long-${name.replace(/ /g, '-')}`;
    const tokens = Array.from({ length: 20 }, () => randomUUID());
    for (const token of tokens) expect(await store.acquireShared(key, { permits: 20 }, token, 10_000, 'holder')).toMatchObject({ acquired: true });
    // A writer waits behind the twenty permit holders: the last key that keeps any shape out.
    const gaveUp = new AbortController();
    const wait = (on: EtcdLockStore, holder: string, waiting: LockShape): Promise<unknown> =>
      on
        .acquireSharedQueued({ key, token: randomUUID(), leaseMs: 3_000, holder, deadline: Date.now() + 60_000, signal: gaveUp.signal }, waiting)
        .catch(() => undefined);
    const writer = wait(store, 'writer', { mode: 'write' });
    let measured: Promise<unknown> | undefined;
    try {
      await pollUntil(async () => (await holders(key)).length === 21, 'the writer queued');
      const reads = tap.recordTxnReads();
      measured = wait(patient, name, shape);
      // Its look when its watch is confirmed, and two periodic ones (every third of its lease).
      await pollUntil(async () => reads.txns.filter((read) => !read.puts).length >= 3, 'three looks', 10_000);
      reads.stop();
      const looks = reads.txns.filter((read) => !read.puts);
      expect(looks.every((look) => look.keys <= ranges && look.values === 0)).toBe(true);
    } finally {
      gaveUp.abort();
      await Promise.all([writer, measured]);
    }
    for (const token of tokens) expect(await store.release(key, token, 0)).toBe(true);
  });

  it('has a permit waiter count the permit holders before a writer that gave up, though its looks behind the writer read only the keys after it', async () => {
    const key = 'behind-writer';
    const [a, b] = [randomUUID(), randomUUID()];
    await store.acquireShared(key, { permits: 2 }, a, 10_000, 'a');
    await store.acquireShared(key, { permits: 2 }, b, 10_000, 'b');
    const gaveUp = new AbortController();
    const writer = store.acquireSharedQueued({ key, token: randomUUID(), leaseMs: 10_000, holder: 'writer', deadline: Date.now() + 60_000, signal: gaveUp.signal }, { mode: 'write' });
    await pollUntil(async () => (await holders(key)).length === 3, 'the writer queued');
    const token = randomUUID();
    let granted = false;
    const waiter = patient.acquireSharedQueued({ key, token, leaseMs: 10_000, holder: 'c', deadline: Date.now() + 60_000 }, { permits: 2 }).then((outcome) => {
      granted = true;
      return outcome;
    });
    await pollUntil(async () => (await holders(key)).length === 4, 'the permit waiter queued');
    const reads = tap.recordTxnReads();
    gaveUp.abort(new Error('the writer gave up'));
    await expect(writer).rejects.toThrow('the writer gave up');
    // Woken by the writer's deletion, it looks again (and twice, so the first look's answer was acted on).
    await pollUntil(async () => granted || reads.txns.filter((read) => !read.puts).length >= 2, 'two looks after the writer went', 20_000);
    reads.stop();
    expect(granted).toBe(false);
    expect(await store.release(key, a, 0)).toBe(true);
    expect((await waiter).result).toMatchObject({ acquired: true });
    expect((await store.list(key)).map((lock) => lock.holder)).toEqual(['b', 'c']);
    expect(await store.release(key, b, 0)).toBe(true);
    expect(await patient.release(key, token, 0)).toBe(true);
  });

  it('keeps a semaphore’s N with its key when the key moves to a lease of another length', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await store.acquireShared('moved', { permits: 2 }, a, 10_000, 'a');
    await store.acquireShared('moved', { permits: 2 }, b, 10_000, 'b');
    // b's key moves to a new lease (extend): the permit key behind a holds only by its own N.
    expect(await store.renew([{ key: 'moved', token: b, leaseMs: 20_000 }])).toEqual([true]);
    expect((await store.list('moved')).map((lock) => lock.holder)).toEqual(['a', 'b']);
    const c = randomUUID();
    expect(await store.acquireShared('moved', { permits: 3 }, c, 10_000, 'c')).toMatchObject({ acquired: true });
    for (const token of [a, b, c]) expect(await store.release('moved', token, 0)).toBe(true);
  });

  it('serves a changed N first come first served: a waiter of a lowered N waits for fewer holders than it, and a larger N behind it waits for it', () =>
    expectChangedPermitsInOrder({ holders }, store));
});
