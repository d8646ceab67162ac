import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { openBenchRedis } from './bench-redis-client.js';
import { sleep } from '../support/clock.js';
import type { Contender, LockAdapter, LockHandle } from './lock-adapter.js';

/** Token-checked delete: the release half of the minimal correct protocol. */
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

/** Polling delay while the key is taken: the smallest sensible timer. */
const POLL_MS = 1;

type RawClient = Redis & { benchRelease(key: string, token: string): Promise<number> };

/**
 * The floor: `SET key token NX PX` to acquire, one token-checked Lua delete to release. Two round trips
 * per uncontended pair, no fencing token, no watchdog, no wake-up. What a library adds is measured on top.
 */
export const rawContender: Contender = {
  id: 'raw',
  label: 'raw SET NX PX + Lua release',
  role: 'floor',
  packageName: 'ioredis',
  tunings: { tuned: `polls every ${POLL_MS} ms` },
  renewsLeases: false,
  async open(options): Promise<LockAdapter> {
    const client = openBenchRedis(options.redisUrl) as RawClient;
    client.defineCommand('benchRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    const deadlineFor = (): number => Date.now() + options.waitMs;
    return {
      async acquire(key): Promise<LockHandle> {
        const redisKey = options.keyPrefix + key;
        // The token the library's leases get (randomUUID: 122 random bits from a cached pool), so the floor pays
        // nothing the library avoids.
        const token = randomUUID();
        const deadline = deadlineFor();
        while ((await client.set(redisKey, token, 'PX', options.leaseMs, 'NX')) !== 'OK') {
          if (Date.now() >= deadline) throw new Error(`raw: ${key} still taken after ${options.waitMs} ms`);
          await sleep(POLL_MS);
        }
        return {
          async release() {
            if ((await client.benchRelease(redisKey, token)) !== 1) throw new Error(`raw: lost ${key} before release`);
          },
        };
      },
      async close() {
        await client.quit();
      },
    };
  },
};
