import { randomUUID } from 'node:crypto';
import type { AcquireOptions, Lease, LockShape, LockStore, QueuedAcquireOutcome } from '../../lib/index';
import type { LockApp } from '../support/lock-app';
import { pollUntil } from '../support/until';

/**
 * Scenarios of a store that queues every shape of a lock in one queue of its own (etcd, ZooKeeper), run
 * by each such store's spec against its real server: what the queue holds is read through `holders`.
 */
export interface QueueView {
  /** The holder names of the lock's queue entries, in queue order (holders first, then waiters). */
  holders(key: string): Promise<string[]>;
}

/**
 * Application `apps[i]` waits for `key` with `options`, its entry queued before this returns (queue order
 * is arrival order); `granted` gets `i` when it holds. The wait comes back in an array: an async function
 * would adopt the promise's state.
 */
export async function queueWaiter(view: QueueView, apps: readonly LockApp[], key: string, i: number, options: AcquireOptions, granted: number[]): Promise<[Promise<Lease>]> {
  const before = (await view.holders(key)).length;
  const waiting = apps[i]!.locks.acquire(key, { ...options, waitMs: 60_000 }).then((lease) => {
    granted.push(i);
    return lease;
  });
  await pollUntil(async () => (await view.holders(key)).length === before + 1, `app-${i} queued`);
  return [waiting];
}

/** How a store's spec sees the wake-ups of its waiters, from its server's own counts. */
export interface WakeUpProbe {
  /** Resolves once every waiter watches what it waits for: all five queued, or r4 and r5 behind the second writer. */
  watching(stage: 'queued' | 'behind the second writer'): Promise<void>;
  /** Starts counting: `notified(n)` resolves once n watch notifications went out since. */
  since(): Promise<{ notified(count: number, what: string): Promise<void> }>;
}

/**
 * A writer holds `rw` (app-0); readers r1, r2, a writer w3, readers r4, r5 queue behind it. Readers get in
 * together behind a writer, readers behind a waiting writer stay out (writer-preferring), and a release
 * notifies only the waiters it admits: the first writer's the two readers, the last reader's the writer,
 * the second writer's the two readers behind it. Fencing tokens follow the grants.
 */
export async function expectReadersAroundWriters(view: QueueView, apps: readonly LockApp[], probe: WakeUpProbe): Promise<void> {
  const granted: number[] = [];
  const queued = (i: number, mode: 'read' | 'write') => queueWaiter(view, apps, 'rw', i, { mode }, granted);
  const writer = await apps[0]!.locks.acquire('rw', { mode: 'write' });
  const [r1] = await queued(1, 'read');
  const [r2] = await queued(2, 'read');
  const [w3] = await queued(3, 'write');
  const [r4] = await queued(4, 'read');
  const [r5] = await queued(5, 'read');
  expect(await view.holders('rw')).toEqual(['app-0', 'app-1', 'app-2', 'app-3', 'app-4', 'app-5']);
  await probe.watching('queued');

  let since = await probe.since();
  await writer.release();
  const [first, second] = await Promise.all([r1, r2]);
  expect(granted.sort()).toEqual([1, 2]);
  await since.notified(2, 'the writer’s release woke the two readers it admitted, nobody else');
  expect(first.fencingToken).toBeGreaterThan(writer.fencingToken);
  expect(second.fencingToken).toBeGreaterThan(writer.fencingToken);
  // Readers that came after the waiting writer stay out while readers hold (writer-preferring).
  expect(await apps[4]!.locks.tryAcquire('rw', { mode: 'read' })).toBeNull();

  since = await probe.since();
  await first.release(); // the writer waits for the last reader before it, not this one
  await second.release();
  const written = await w3;
  expect(granted).toEqual([1, 2, 3]);
  await since.notified(1, 'the last reader’s release woke the writer alone');
  expect(written.fencingToken).toBeGreaterThan(Math.max(first.fencingToken, second.fencingToken));

  await probe.watching('behind the second writer');
  since = await probe.since();
  await written.release();
  const late = await Promise.all([r4, r5]);
  expect(granted.slice(3).sort()).toEqual([4, 5]);
  await since.notified(2, 'the second writer’s release woke the two readers behind it');
  for (const lease of late) expect(lease.fencingToken).toBeGreaterThan(written.fencingToken);
  await Promise.all(late.map((lease) => lease.release()));
  expect(await view.holders('rw')).toEqual([]);
}

/**
 * Plain locks and shaped ones of one key queue in one order across six applications (named `app-<i>`), a
 * single attempt of any shape never gets ahead and leaves nothing, and a waiter that gives up lets those
 * behind it in.
 */
export async function expectOneOrderForEveryShape(view: QueueView, apps: readonly LockApp[]): Promise<void> {
  const granted: number[] = [];
  const plain = await apps[0]!.locks.acquire('mixed');
  const [reader] = await queueWaiter(view, apps, 'mixed', 1, { mode: 'read' }, granted);
  const gaveUp = new AbortController();
  const writer = apps[2]!.locks.acquire('mixed', { mode: 'write', waitMs: 60_000, signal: gaveUp.signal });
  await pollUntil(async () => (await view.holders('mixed')).length === 3, 'the writer queued');
  const [lateReader] = await queueWaiter(view, apps, 'mixed', 3, { mode: 'read' }, granted);
  const [secondPlain] = await queueWaiter(view, apps, 'mixed', 4, {}, granted);
  // A single attempt of any shape never gets ahead of the queue, and leaves nothing in it.
  expect(await apps[5]!.locks.tryAcquire('mixed', { mode: 'read' })).toBeNull();
  expect(await view.holders('mixed')).toEqual(['app-0', 'app-1', 'app-2', 'app-3', 'app-4']);

  await plain.release();
  const first = await reader;
  expect(granted).toEqual([1]);
  gaveUp.abort(new Error('the caller gave up'));
  await expect(writer).rejects.toThrow('the caller gave up');
  // The writer's entry went: the reader behind it shares the lock with the first one.
  const second = await lateReader;
  expect(granted).toEqual([1, 3]);
  expect(await view.holders('mixed')).toEqual(['app-1', 'app-3', 'app-4']);
  await first.release();
  await second.release();
  const last = await secondPlain;
  expect(last.fencingToken).toBeGreaterThan(second.fencingToken);
  await last.release();
}

/**
 * A changed N is served first come first served: a waiter of a lowered N waits until fewer than its N
 * hold, and a waiter of a larger N behind it waits for it, then counts it against its own N.
 */
export async function expectChangedPermitsInOrder(view: QueueView, store: LockStore): Promise<void> {
  const [a, b] = [randomUUID(), randomUUID()];
  await store.acquireShared!('lowered', { permits: 3 }, a, 10_000, 'a');
  await store.acquireShared!('lowered', { permits: 3 }, b, 10_000, 'b');
  const order: string[] = [];
  const [tokenX, tokenY] = [randomUUID(), randomUUID()];
  const wait = (holder: string, token: string, shape: LockShape): Promise<QueuedAcquireOutcome> =>
    store
      .acquireSharedQueued!({ key: 'lowered', token, leaseMs: 10_000, holder, deadline: Date.now() + 60_000 }, shape)
      .then((outcome) => (order.push(holder), outcome));
  const x = wait('x', tokenX, { permits: 1 });
  await pollUntil(async () => (await view.holders('lowered')).length === 3, 'x queued');
  const y = wait('y', tokenY, { permits: 3 });
  await pollUntil(async () => (await view.holders('lowered')).length === 4, 'y queued');
  // Two hold, fewer than y's N, but x came first and needs fewer than one.
  expect(await store.acquireShared!('lowered', { permits: 3 }, randomUUID(), 10_000, 'once')).toMatchObject({ acquired: false });
  expect(await store.release('lowered', a, 0)).toBe(true);
  expect(await store.release('lowered', b, 0)).toBe(true);
  const [granted, behind] = await Promise.all([x, y]);
  expect(order).toEqual(['x', 'y']);
  // y counts x, the one holder, against its own N of 3: both hold.
  expect((await store.list('lowered')).map((lock) => lock.holder)).toEqual(['x', 'y']);
  const fence = (outcome: QueuedAcquireOutcome): number => (outcome.result.acquired ? outcome.result.fencingToken : NaN);
  expect(fence(behind)).toBeGreaterThan(fence(granted));
  expect(await store.release('lowered', tokenX, 0)).toBe(true);
  expect(await store.release('lowered', tokenY, 0)).toBe(true);
}
