import { randomUUID } from 'node:crypto';
import { LockStoreUnavailableError, type LockStore } from '../../lib/index';
import { recordWarnings } from '../support/process-warnings';
import { pollUntil } from '../support/until';

/** More than Node's limit of 10 listeners on one emitter or signal before it warns of a leak. */
export const MANY_WAITERS = 12;

/** A store that queues waiters itself, and how long one key's queue in it is (holders included). */
export interface QueueingStore {
  readonly store: LockStore;
  queueLength(key: string): Promise<number>;
}

/** `acquireQueued` of a fresh token at `key`, a minute to wait, with a signal of its own for even `i`. */
function waitAt(store: LockStore, key: string, i: number, token = randomUUID()): Promise<unknown> {
  const signal = i % 2 === 0 ? new AbortController().signal : undefined;
  return store.acquireQueued!({ key, token, leaseMs: 10_000, holder: `waiter-${i}`, deadline: Date.now() + 60_000, signal });
}

/**
 * MANY_WAITERS waiters of one key in one process (half with a signal of their own, as LockService's waits
 * are, half none) all get the key in turn, and Node warns of no leak: none of them listens on a signal the
 * store shares.
 */
export async function expectManyWaitersWithoutWarning({ store, queueLength }: QueueingStore, key: string): Promise<void> {
  const holder = randomUUID();
  expect(await store.acquire(key, holder, 10_000, 'holder')).toMatchObject({ acquired: true });
  const warnings = recordWarnings();
  const waits = Array.from({ length: MANY_WAITERS }, (_, i) => {
    const token = randomUUID();
    return waitAt(store, key, i, token).then((outcome) => (outcome as { result: { acquired: boolean } }).result.acquired && store.release(key, token, 0));
  });
  await pollUntil(async () => (await queueLength(key)) === MANY_WAITERS + 1, 'every waiter queued');
  expect(await store.release(key, holder, 0)).toBe(true);
  expect(await Promise.all(waits)).toEqual(Array.from({ length: MANY_WAITERS }, () => true));
  expect(await warnings.stop()).toEqual([]);
}

/** Closing the store ends every wait at once, with or without a signal of its own, and refuses one started after. */
export async function expectCloseToEndEveryWait({ store, queueLength }: QueueingStore, key: string): Promise<void> {
  expect(await store.acquire(key, randomUUID(), 10_000, 'holder')).toMatchObject({ acquired: true });
  const waits = Array.from({ length: MANY_WAITERS }, (_, i) => waitAt(store, key, i));
  await pollUntil(async () => (await queueLength(key)) === MANY_WAITERS + 1, 'every waiter queued');
  await store.close();
  for (const each of waits) await expect(each).rejects.toBeInstanceOf(LockStoreUnavailableError);
  await expect(waitAt(store, key, 0)).rejects.toBeInstanceOf(LockStoreUnavailableError);
  await expect(waitAt(store, key, 1)).rejects.toBeInstanceOf(LockStoreUnavailableError);
}
