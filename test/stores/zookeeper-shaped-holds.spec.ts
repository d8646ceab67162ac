import { randomUUID } from 'node:crypto';
import { LockStoreUnavailableError, type AcquireResult, type LockShape, type QueuedAcquireOutcome } from '../../lib/index';
import { createZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-client.factory';
import { ZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-lock.store';
import { loadZookeeper } from '../../lib/stores/zookeeper/zookeeper.loader';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { testPrefix } from '../support/test-prefix';
import { expectChangedPermitsInOrder } from './shaped-queue.scenarios';
import { deletes, watches, ZookeeperTap, writesFor } from './zookeeper-tap';
import { openObserver, queueOf, pollUntil, type ZookeeperObserver } from './zookeeper-test-support';

const PERMITS: LockShape = { permits: 2 };

/**
 * Read/write locks and semaphores on ZooKeeper, each hold its own node: single attempts whose answer is
 * lost or late, a permit's single attempt racing another grant, a mark that lands before the watch meant
 * for it, a changed N, and a holder's renewal racing its own mark. Requests are stopped or their replies
 * held on a real client (zookeeper-tap.ts).
 */
describe('ZooKeeper: read/write locks and semaphores, each hold its own node', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let observer: ZookeeperObserver;
  let tap: ZookeeperTap;
  let store: ZookeeperLockStore;
  let impatient: ZookeeperLockStore;
  /** On the tapped client, with the usual timeout: a request stopped a while is still its caller's. */
  let patient: ZookeeperLockStore;
  /** As patient, and its waiters look again on their own only minutes later: a prompt grant is a notification's. */
  let unhurried: ZookeeperLockStore;
  const holders = (key: string): Promise<string[]> => queueOf(observer, prefix, key).then((queue) => queue.map((entry) => entry.holder));
  const wait = (on: ZookeeperLockStore, key: string, token: string, holder: string, shape: LockShape, signal?: AbortSignal): Promise<QueuedAcquireOutcome> =>
    on.acquireSharedQueued({ key, token, leaseMs: 10_000, holder, deadline: Date.now() + 60_000, signal }, shape);

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    observer = await openObserver(ensemble);
    tap = new ZookeeperTap(await loadZookeeper());
    const settings = { keyPrefix: prefix, connect: ensemble.connect, sessionTimeoutMs: 10_000 };
    store = await createZookeeperLockStore(ensemble.connect, { ...settings, commandTimeoutMs: 5_000 });
    impatient = new ZookeeperLockStore(tap.zookeeper, { ...settings, commandTimeoutMs: 300 });
    patient = new ZookeeperLockStore(tap.zookeeper, { ...settings, commandTimeoutMs: 5_000 });
    unhurried = new ZookeeperLockStore(tap.zookeeper, { ...settings, commandTimeoutMs: 5_000, queueRechecks: { firstMs: 600_000, maxMs: 600_000 } });
    // Its session opens here, under the usual timeout's retries: 300 ms is for its requests, not for a
    // first connect on a loaded box.
    await pollUntil(() => impatient.checkLeaseLength(10_000).then(() => true, () => false), 'the impatient store has a session');
  });
  afterAll(async () => {
    await Promise.all([store, impatient, patient, unhurried].map((each) => each?.close()));
    await observer?.close();
    await ensemble?.stop();
  });

  it.each<[string, LockShape]>([
    ['reader', { mode: 'read' }],
    ['permit', PERMITS],
  ])('undoes a %s’s single attempt whose create answered too late: the node it made is found by its nonce and deleted', async (name, shape) => {
    const key = `late-${name}`;
    const late = tap.holdReplyTo(writesFor('late'));
    // A ten-second session: if nothing undid the attempt, its node would outlive this test.
    await expect(impatient.acquireShared(key, shape, randomUUID(), 10_000, 'late')).rejects.toBeInstanceOf(LockStoreUnavailableError);
    await late.landed;
    late.deliver();
    await pollUntil(async () => (await holders(key)).length === 0, 'the late node is gone');
    const next = randomUUID();
    expect(await store.acquireShared(key, { mode: 'write' }, next, 10_000, 'next')).toMatchObject({ acquired: true });
    expect(await store.release(key, next, 0)).toBe(true);
  });

  it.each<[string, LockShape | undefined]>([
    ['plain', undefined],
    ['reader', { mode: 'read' }],
    ['permit', PERMITS],
  ])('grants a %s acquisition re-sent under a token that holds the key again, under the same fencing token, on the same node', async (name, shape) => {
    const key = `resent-${name}`;
    const token = randomUUID();
    const take = (): Promise<AcquireResult> => (shape ? store.acquireShared(key, shape, token, 10_000, name) : store.acquire(key, token, 10_000, name));
    const first = await take();
    expect(first).toMatchObject({ acquired: true });
    expect(await take()).toEqual(first);
    expect(await holders(key)).toEqual([name]);
    expect(await store.release(key, token, 0)).toBe(true);
  });

  it('tells release listeners when any reader goes, not only the first one', async () => {
    const [first, second] = [randomUUID(), randomUUID()];
    await store.acquireShared('readers', { mode: 'read' }, first, 10_000, 'first');
    await store.acquireShared('readers', { mode: 'read' }, second, 10_000, 'second');
    let told!: () => void;
    const released = new Promise<void>((resolve) => (told = resolve));
    const stop = await store.onRelease('readers', () => told());
    expect(await store.release('readers', second, 0)).toBe(true);
    await released;
    stop();
    expect(await store.release('readers', first, 0)).toBe(true);
  });

  it('gives a permit back when its minimum hold ends though the write that started the hold got no answer', async () => {
    const key = 'unanswered-hold';
    const token = randomUUID();
    expect(await impatient.acquireShared(key, { permits: 1 }, token, 10_000, 'held')).toMatchObject({ acquired: true });
    const { path } = (await queueOf(observer, prefix, key))[0]!;
    const write = tap.holdReplyTo(writesFor('held', 'setData'));
    const deleted = tap.count(deletes(path));
    // The node's delete, when it comes, waits here until the test has looked.
    const remove = tap.pauseBefore(deletes(path));
    await expect(impatient.release(key, token, 200)).rejects.toBeInstanceOf(LockStoreUnavailableError);
    // The hold goes on: the failed release did not delete the node, which is still queued.
    expect(deleted.sent).toBe(0);
    expect(await holders(key)).toEqual(['held']);
    await write.landed;
    write.deliver();
    // The node is deleted once the hold is over (not when the session ends: the impatient store lives on).
    await remove.reached;
    remove.send();
    await pollUntil(async () => (await holders(key)).length === 0, 'the held permit is given back');
    expect(await store.acquireShared(key, { permits: 1 }, randomUUID(), 10_000, 'next')).toMatchObject({ acquired: true });
  });

  it.each<[string, (key: string, token: string) => Promise<boolean>]>([
    ['a single attempt', async (key, token) => (await store.acquireShared(key, PERMITS, token, 10_000, 'last')).acquired],
    ['a waiter', async (key, token) => (await wait(store, key, token, 'last', PERMITS)).result.acquired],
  ])('turns a permit’s single attempt away when %s took the last permit while its create was on its way: never N + 1 holders', async (name, takeLast) => {
    const key = `raced-${name.replace(/ /g, '-')}`;
    const [first, last] = [randomUUID(), randomUUID()];
    expect(await store.acquireShared(key, PERMITS, first, 10_000, 'first')).toMatchObject({ acquired: true });
    // An attempt that read the queue first (one holder of two) and created its node then would hold a third permit.
    const create = tap.pauseBefore(writesFor('raced'));
    const attempt = patient.acquireShared(key, PERMITS, randomUUID(), 10_000, 'raced');
    await create.reached;
    expect(await takeLast(key, last)).toBe(true);
    create.send();
    expect(await attempt).toMatchObject({ acquired: false });
    expect(await holders(key)).toEqual(['first', 'last']);
    expect(await store.release(key, first, 0)).toBe(true);
    expect(await store.release(key, last, 0)).toBe(true);
  });

  it('counts a permit node whose create landed before its holder heard back: a single attempt after it is turned away, a waiter queues behind it', async () => {
    const key = 'landed-first';
    const [first, raced, last] = [randomUUID(), randomUUID(), randomUUID()];
    expect(await store.acquireShared(key, PERMITS, first, 10_000, 'first')).toMatchObject({ acquired: true });
    const answer = tap.holdReplyTo(writesFor('raced'));
    const attempt = patient.acquireShared(key, PERMITS, raced, 10_000, 'raced');
    await answer.landed;
    expect(await store.acquireShared(key, PERMITS, randomUUID(), 10_000, 'once')).toMatchObject({ acquired: false });
    let granted = false;
    const waiter = wait(store, key, last, 'last', PERMITS).then((outcome) => ((granted = true), outcome));
    await pollUntil(async () => (await holders(key)).length === 3, 'the waiter queued');
    answer.deliver();
    expect(await attempt).toMatchObject({ acquired: true });
    expect(granted).toBe(false);
    expect((await store.list(key)).map((lock) => lock.holder)).toEqual(['first', 'raced']);
    expect(await store.release(key, first, 0)).toBe(true);
    expect((await waiter).result).toMatchObject({ acquired: true });
    expect((await store.list(key)).map((lock) => lock.holder)).toEqual(['raced', 'last']);
    expect(await patient.release(key, raced, 0)).toBe(true);
    expect(await store.release(key, last, 0)).toBe(true);
  });

  /** A permit contender that queues behind two holders, and once the first goes is granted and marks its node. */
  type MarkedFirst = (key: string, token: string) => { queued: Promise<unknown>; granted: () => Promise<boolean>; on: ZookeeperLockStore };
  it.each<[string, MarkedFirst]>([
    [
      'waiter',
      (key, token) => {
        const outcome = wait(store, key, token, 'marked', PERMITS);
        return { queued: pollUntil(async () => (await holders(key)).length === 3, 'the waiter queued'), granted: async () => (await outcome).result.acquired, on: store };
      },
    ],
    [
      'single attempt',
      (key, token) => {
        // Its create lands; its read of the queue waits for the answer, so it looks only after a holder went.
        const answer = tap.holdReplyTo(writesFor('marked'));
        const attempt = patient.acquireShared(key, PERMITS, token, 10_000, 'marked');
        return { queued: answer.landed, granted: async () => (answer.deliver(), (await attempt).acquired), on: patient };
      },
    ],
  ])('lets a permit waiter in whose watch on the permit %s before it came after that one’s mark: the node was written, so it was granted', async (name, markedFirst) => {
    const key = `mark-before-watch-${name.replace(/ /g, '-')}`;
    const [first, second, marked, behind] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    expect(await store.acquireShared(key, PERMITS, first, 10_000, 'first')).toMatchObject({ acquired: true });
    expect(await store.acquireShared(key, PERMITS, second, 10_000, 'second')).toMatchObject({ acquired: true });
    const before = markedFirst(key, marked);
    await before.queued;
    const markedPath = (await queueOf(observer, prefix, key))[2]!.path;
    // The waiter behind it read the queue (the one before it waits) and is about to watch that node. It
    // gives up before the first one's lease ends: that node's deletion would let it in, late.
    const watch = tap.pauseBefore(watches(markedPath));
    const late = unhurried.acquireSharedQueued({ key, token: behind, leaseMs: 10_000, holder: 'behind', deadline: Date.now() + 5_000 }, PERMITS);
    await watch.reached;
    // Meanwhile the one before it is granted and marks its node, and a permit is free for the one behind.
    expect(await store.release(key, first, 0)).toBe(true);
    expect(await before.granted()).toBe(true);
    await pollUntil(async () => (await observer.client.exists(markedPath))?.version === 1, 'the mark landed');
    expect(await store.release(key, second, 0)).toBe(true);
    watch.send();
    // Its watch is set after the mark and will not fire; its own next look is ten minutes away.
    expect((await late).result).toMatchObject({ acquired: true });
    expect(await before.on.release(key, marked, 0)).toBe(true);
    expect(await unhurried.release(key, behind, 0)).toBe(true);
  });

  it('marks a granted permit waiter’s node again when its mark was lost with the connection: the permit waiter behind it is let in without its periodic look', async () => {
    const key = 'lost-mark';
    const [first, second, marked, behind] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    expect(await store.acquireShared(key, PERMITS, first, 10_000, 'first')).toMatchObject({ acquired: true });
    expect(await store.acquireShared(key, PERMITS, second, 10_000, 'second')).toMatchObject({ acquired: true });
    const granted = wait(patient, key, marked, 'marked', PERMITS);
    await pollUntil(async () => (await holders(key)).length === 3, 'the waiter queued');
    const markedPath = (await queueOf(observer, prefix, key))[2]!.path;
    // The waiter behind it watches it, and gives up before the first one's lease ends (its deletion would let it in, late).
    const watching = tap.count(watches(markedPath));
    const late = unhurried.acquireSharedQueued({ key, token: behind, leaseMs: 10_000, holder: 'behind', deadline: Date.now() + 5_000 }, PERMITS);
    await pollUntil(async () => watching.answered === 1, 'the waiter behind watches it');
    const mark = tap.lose(writesFor('marked', 'setData'));
    expect(await store.release(key, first, 0)).toBe(true);
    expect((await granted).result).toMatchObject({ acquired: true });
    await mark.reached;
    // A permit is free for the waiter behind: only the mark tells it (its next look is ten minutes away).
    expect(await store.release(key, second, 0)).toBe(true);
    expect((await late).result).toMatchObject({ acquired: true });
    expect(await patient.release(key, marked, 0)).toBe(true);
    expect(await unhurried.release(key, behind, 0)).toBe(true);
  });

  it('serves a changed N first come first served: a waiter of a lowered N waits for fewer holders than it, and a larger N behind it waits for it', () =>
    expectChangedPermitsInOrder({ holders }, store));

  it('keeps a permit holder whose renewal to another length raced its own mark: the mark moved the node’s version, not its owner', async () => {
    const key = 'marked';
    const [holder, marked] = [randomUUID(), randomUUID()];
    expect(await store.acquireShared(key, { permits: 1 }, holder, 10_000, 'holder')).toMatchObject({ acquired: true });
    const gaveUp = new AbortController();
    const granted = wait(patient, key, marked, 'marked', { permits: 1 });
    await pollUntil(async () => (await holders(key)).length === 2, 'the waiter queued');
    const behind = wait(store, key, randomUUID(), 'behind', { permits: 1 }, gaveUp.signal).catch(() => undefined);
    await pollUntil(async () => (await holders(key)).length === 3, 'the waiter behind it queued');
    // Granted with a permit waiter behind it, the waiter marks its node; the mark waits here.
    const mark = tap.pauseBefore(writesFor('marked', 'setData'));
    expect(await store.release(key, holder, 0)).toBe(true);
    expect((await granted).result).toMatchObject({ acquired: true });
    await mark.reached;
    // The renewal read the node at version 0 and is about to write it; the mark lands first.
    const write = tap.pauseBefore((request) => writesFor('marked', 'setData')(request) && request.data.includes('8000'));
    const renewal = patient.renew([{ key, token: marked, leaseMs: 8_000 }]);
    await write.reached;
    mark.send();
    await pollUntil(async () => (await observer.client.exists((await queueOf(observer, prefix, key))[0]!.path))?.version === 1, 'the mark landed');
    write.send();
    expect(await renewal).toEqual([true]);
    gaveUp.abort();
    await behind;
    expect(await patient.release(key, marked, 0)).toBe(true);
  });
});
