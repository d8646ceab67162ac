import { Redis } from 'ioredis';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * `fair: true` trusts no message: an ACL user who may not read the library's keys but may publish on every
 * channel (the default for new users before Redis 7) sees the grant channels in PUBSUB CHANNELS and can
 * send `g|<waiter>|<fence>` to them. Such a message made a waiter's acquire resolve while the real holder
 * still held the key, with a fencing token the attacker chose; and a message for a waiter not registered
 * yet was kept and granted that waiter a key later, with no message at all. Only the store grants.
 */
describe('fair queue: a forged grant message', () => {
  const prefix = testPrefix(__filename);
  const user = `publisher-${process.pid}`;
  const admin = new Redis(redisUrl());
  let attacker: Redis;
  let holder: LockApp;
  let waiter: LockApp;

  beforeAll(async () => {
    // May publish on any channel and list them; may read no key.
    await admin.call('ACL', 'SETUSER', user, 'on', '>pub-secret', 'resetkeys', 'allchannels', '-@all', '+publish', '+pubsub', '+ping');
    attacker = new Redis(redisUrl().replace('redis://', `redis://${user}:pub-secret@`));
    holder = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true });
    waiter = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, fair: true });
  });
  afterAll(async () => {
    await holder.close();
    await waiter.close();
    attacker.disconnect();
    await admin.call('ACL', 'DELUSER', user);
    admin.disconnect();
  });

  /** Every grant channel of the library on the server, as the attacker sees them. */
  async function grantChannels(): Promise<string[]> {
    return (await attacker.call('PUBSUB', 'CHANNELS', `${prefix}#granted:*`)) as string[];
  }

  it('wakes a waiter at most: the grant counts only once the store made it, with the store’s fencing token', async () => {
    const held = await holder.locks.acquire('order:1', { leaseMs: 30_000 });
    const contended = waiter.next('contention', (e) => e.key === 'order:1').catch(() => undefined);
    const waiting = waiter.locks.acquire('order:1', { waitMs: 20_000, leaseMs: 30_000 });
    void contended;
    // The waiter stands in line once its instance listens on its grant channel.
    while ((await grantChannels()).length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    let settledEarly = false;
    void waiting.then(() => (settledEarly = !released), () => undefined);
    let released = false;
    for (const channel of await grantChannels()) {
      for (let id = 0; id < 64; id++) {
        await attacker.publish(channel, `g|${id}|${MAX_SAFE}`);
        await attacker.publish(channel, `g|${id}|${held.fencingToken + 1}`);
      }
    }
    // Let the forged messages reach the waiter (a round trip on the waiter's connections after them).
    await waiter.store.inspect('order:1');
    await holder.store.inspect('order:1');
    expect(await holder.store.inspect('order:1')).toMatchObject({ fencingToken: held.fencingToken });
    released = true;
    await held.release();
    const lease = await waiting;
    expect(settledEarly).toBe(false);
    expect(lease.fencingToken).toBeGreaterThan(held.fencingToken);
    expect(lease.fencingToken).not.toBe(MAX_SAFE);
    expect(await waiter.store.inspect('order:1')).toMatchObject({ fencingToken: lease.fencingToken });
    await lease.release();
  });

  it('keeps no forged message for a waiter that registers later', async () => {
    const held = await holder.locks.acquire('order:2', { leaseMs: 30_000 });
    for (const channel of await grantChannels()) {
      for (let id = 0; id < 64; id++) await attacker.publish(channel, `g|${id}|${held.fencingToken + 5}`);
    }
    await waiter.store.inspect('order:2');
    // A wait that starts now and stands in line would be handed a buffered message at once.
    const outcome = await waiter.locks.tryAcquire('order:2');
    expect(outcome).toBeNull();
    const waited = await waiter.locks.acquire('order:2', { waitMs: 300 }).then(
      (lease) => lease,
      (error: unknown) => error,
    );
    expect(waited).toMatchObject({ code: 'LOCK_NOT_ACQUIRED' });
    await held.release();
  });
});
