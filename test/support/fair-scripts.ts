import { randomUUID } from 'node:crypto';
import type { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';

/**
 * Loads every fair-queue script into the server (a grant, a join that queues, a leave), of the plain queue
 * and of the semaphore waiters' queue, so that calls a spec stalls run for real when the stall ends instead
 * of meeting NOSCRIPT.
 */
export async function warmFairScripts(store: RedisLockStore): Promise<void> {
  const warm = { key: 'warm-up', token: randomUUID(), leaseMs: 30_000, holder: 'test', deadline: Date.now() + 5_000 };
  await store.acquireQueued!(warm);
  await store.acquireQueued!({ ...warm, token: randomUUID(), deadline: Date.now() });
  await store.release('warm-up', warm.token, 0);
  const permit = { permits: 1 };
  const shaped = { ...warm, key: 'warm-up-permit', token: randomUUID() };
  await store.acquireSharedQueued!(shaped, permit);
  await store.acquireSharedQueued!({ ...shaped, token: randomUUID(), deadline: Date.now() }, permit);
  await store.release('warm-up-permit', shaped.token, 0);
}
