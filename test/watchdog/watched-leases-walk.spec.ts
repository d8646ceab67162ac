import { Redis } from 'ioredis';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

async function until(condition: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * The watchdog keeps its leases in an intrusive list and declares expired ones lost while it walks it.
 * A loss aborts the lease's signal synchronously; a listener that releases another lease then unlinks
 * an entry the walk has not reached yet. Every lease after it must still be watched.
 */
describe('watchdog: a lease released from a loss listener during the watchdog tick', () => {
  const prefix = testPrefix(__filename);
  const redis = new Redis(redisUrl());
  let app: LockApp;
  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix });
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
  });

  it('leaves the leases after it renewed', async () => {
    const expiring = await app.locks.acquire('a', { leaseMs: 300, autoRenew: false });
    const released = await app.locks.acquire('b', { leaseMs: 30_000 });
    const watched = await app.locks.acquire('c', { leaseMs: 600 });
    expiring.signal.addEventListener('abort', () => void released.release());
    await until(() => expiring.signal.aborted);
    const renewals = () => app.recorded('renewed').filter((event) => event.key === 'c').length;
    const after = renewals();
    await until(async () => renewals() >= after + 3 || (await redis.exists(`${prefix}c`)) === 0);
    expect(await redis.exists(`${prefix}c`)).toBe(1);
    await watched.release();
  });
});
