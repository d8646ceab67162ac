import type { Redis } from 'ioredis';
import { newToken } from '../../lib/acquisition/ownership-token.js';
import { openBenchRedis } from './bench-redis-client.js';
import { sleep } from '../support/clock.js';
import type { Contender, LockAdapter, LockHandle } from './lock-adapter.js';

/**
 * The least a grant that issues a fencing token makes Redis do: the key is set with its TTL only when free,
 * and only then is the counter incremented, in one script (2 commands inside the server on a grant, 1 on a
 * denial). One counter per adapter: on one primary that is the cheapest strictly increasing source.
 */
const ACQUIRE_LUA = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  return redis.call('INCR', KEYS[2])
end
return 0
`;

/** Token-checked delete, as the raw floor's. */
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

/** Polling delay while the key is taken, as the raw floor's. */
const POLL_MS = 1;

type FencedClient = Redis & {
  benchFencedAcquire(key: string, counter: string, token: string, leaseMs: number): Promise<number>;
  benchFencedRelease(key: string, token: string): Promise<number>;
};

/**
 * The fenced floor: one script that SET NX PXes the token and INCRs a counter for the fencing token, one
 * token-checked delete script. Two round trips and six server commands per uncontended pair (the library's
 * count), no watchdog, no loss detection, no wake-up. It pays nothing the library avoids: the library's own
 * token generator (`newToken`) and the client settings every ioredis contender gets.
 */
export const fencedContender: Contender = {
  id: 'fenced',
  label: 'fenced floor: SET NX PX + INCR script, Lua release',
  role: 'floor',
  packageName: 'ioredis',
  tunings: { tuned: `polls every ${POLL_MS} ms` },
  renewsLeases: false,
  async open(options): Promise<LockAdapter> {
    const client = openBenchRedis(options.redisUrl) as FencedClient;
    client.defineCommand('benchFencedAcquire', { numberOfKeys: 2, lua: ACQUIRE_LUA });
    client.defineCommand('benchFencedRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    const counterKey = `${options.keyPrefix}fence-counter`;
    return {
      async acquire(key): Promise<LockHandle> {
        const redisKey = options.keyPrefix + key;
        const token = newToken();
        const deadline = Date.now() + options.waitMs;
        while (!((await client.benchFencedAcquire(redisKey, counterKey, token, options.leaseMs)) > 0)) {
          if (Date.now() >= deadline) throw new Error(`fenced: ${key} still taken after ${options.waitMs} ms`);
          await sleep(POLL_MS);
        }
        return {
          async release() {
            if ((await client.benchFencedRelease(redisKey, token)) !== 1) throw new Error(`fenced: lost ${key} before release`);
          },
        };
      },
      async close() {
        await client.quit();
      },
    };
  },
};
