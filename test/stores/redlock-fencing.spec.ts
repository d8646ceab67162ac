import { randomBytes } from 'node:crypto';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { testPrefix } from '../support/test-prefix';
import { RedlockMasters, redlockStore } from './redlock-test-support';

const token = (): string => randomBytes(16).toString('base64url');
/** An hour in µs: a counter that far ahead of every clock can only be passed on by the quorum write. */
const HOUR_US = 3_600_000_000;

/**
 * Tries to break the quorum fencing token where it is weakest: two grants whose majorities share one
 * master only, the other master of the later grant restarted empty (its counter gone). Master 0's counter
 * is first set an hour ahead of every clock (a client whose clock ran fast made a grant there), so the
 * clocks cannot carry the order: only phase 2 of the first grant, which raised master 1's counter to its
 * token, can. Without it the later grant (masters 1 and 2) would get a token an hour lower.
 */
describe('Redlock fencing tokens across grants whose majorities share one master', () => {
  it('rise although the later majority is the shared master and a master restarted empty', async () => {
    const masters = await RedlockMasters.start(3);
    const prefix = testPrefix(__filename);
    const store = redlockStore(masters, prefix, 1_000);
    try {
      const lockKey = `${prefix}ledger`;
      const fenceKey = new RedisKeyLayout(prefix).fenceKey(lockKey);
      const ahead = (Date.now() * 1_000 + HOUR_US).toFixed(0);
      await masters.ask(0, (redis) => redis.set(fenceKey, ahead));

      await masters.kill(2);
      const firstToken = token();
      const first = await store.acquire('ledger', firstToken, 10_000, 'first');
      if (!first.acquired) throw new Error('masters 0 and 1 are a majority: the key should be granted');
      expect(first.fencingToken).toBeGreaterThan(Number(ahead));
      expect(await store.release('ledger', firstToken, 0)).toBe(true);

      await masters.restartEmpty(2);
      await masters.kill(0);
      const second = await store.acquire('ledger', token(), 10_000, 'second');
      if (!second.acquired) throw new Error('masters 1 and 2 are a majority: the key should be granted');
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    } finally {
      await store.close();
      await masters.stop();
    }
  });
});
