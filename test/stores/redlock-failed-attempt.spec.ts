import { randomBytes } from 'node:crypto';
import type { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store';
import { testPrefix } from '../support/test-prefix';
import { RedlockMasters, redlockStore } from './redlock-test-support';
import { waitFor } from '../../scripts/servers/server-probes';

const token = (): string => randomBytes(16).toString('base64url');

/**
 * An attempt that gets a minority of the masters must give back what it got, token-checked, before it
 * reports the denial: a key left behind on the minority would block that master until its TTL ran out,
 * and enough such leftovers grant nobody at all.
 */
describe('a Redlock attempt that gets only a minority', () => {
  const prefix = testPrefix(__filename);
  let masters: RedlockMasters;
  let store: RedlockLockStore;
  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
    store = redlockStore(masters, prefix);
  });
  afterAll(async () => {
    await store.close();
    await masters.stop();
  });

  it('is denied and leaves no key of its own on the master that granted it, and the holder keeps the key', async () => {
    const holder = token();
    const granted = await store.acquire('order:1', holder, 10_000, 'holder');
    expect(granted.acquired).toBe(true);
    const fence = (granted as { fencingToken: number }).fencingToken;
    // The third master's copy may come a moment after the majority's: every master holds the grant's token.
    await waitFor('every master to hold the grant', async () =>
      (await Promise.all([0, 1, 2].map((i) => masters.ask(i, (redis) => redis.get(`${prefix}order:1`))))).every((value) => value?.includes(`|${fence}|`)),
    );
    // Master 0 forgets the holder's copy (an eviction, an operator's DEL): it will grant the next attempt.
    const lockKey = `${prefix}order:1`;
    await masters.ask(0, (redis) => redis.del(lockKey));

    const denied = await store.acquire('order:1', token(), 10_000, 'contender');
    expect(denied).toMatchObject({ acquired: false });
    expect(await masters.ask(0, (redis) => redis.exists(lockKey))).toBe(0);
    expect(await store.inspect('order:1')).toMatchObject({ holder: 'holder', fencingToken: fence });
    expect(await store.renew([{ key: 'order:1', token: holder, leaseMs: 10_000 }])).toEqual([true]);
  });

});
