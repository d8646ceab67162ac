import type { Lease } from '../../lib/index';
import type { LockApp } from '../support/lock-app';

/**
 * `apps[0]` holds `key`; `apps[1..3]` wait for it one after another (`queued(i)` resolves once the i-th
 * waiter's entry is in the queue, so that arrival order is queue order). Each release hands the key to the
 * next waiter in that order, each with a fencing token above the one before.
 */
export async function expectHandedOnInArrivalOrder(apps: readonly LockApp[], key: string, queued: (length: number) => Promise<unknown>): Promise<void> {
  let holder = await apps[0]!.locks.acquire(key, { waitMs: 0 });
  const order: number[] = [];
  const waiting: Array<Promise<Lease>> = [];
  for (let i = 1; i <= 3; i++) {
    waiting.push(apps[i]!.locks.acquire(key, { waitMs: 30_000 }).then((lease) => (order.push(i), lease)));
    await queued(i);
  }
  for (let next = 1; next <= 3; next++) {
    await holder.release();
    const lease = await waiting[next - 1]!;
    expect(lease.fencingToken).toBeGreaterThan(holder.fencingToken);
    holder = lease;
  }
  await holder.release();
  expect(order).toEqual([1, 2, 3]);
}
