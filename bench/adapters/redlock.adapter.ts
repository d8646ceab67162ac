import { Redlock } from '@sesamecare-oss/redlock';
import { openBenchRedis } from './bench-redis-client.js';
import type { Contender, LockAdapter } from './lock-adapter.js';
import { REDLOCK_TUNINGS, redlockRetrySettings } from './redlock.settings.js';
import { scopedCalls } from './scope-handle.js';

/**
 * Redlock (the maintained @sesamecare-oss fork) on one Redis, through `using`: the form its README
 * recommends, which extends the lock automatically while the routine runs (like a watchdog).
 */
export const redlockContender: Contender = {
  id: 'redlock',
  label: '@sesamecare-oss/redlock using()',
  role: 'alternative',
  packageName: '@sesamecare-oss/redlock',
  tunings: REDLOCK_TUNINGS,
  renewsLeases: true,
  async open(options): Promise<LockAdapter> {
    const client = openBenchRedis(options.redisUrl);
    const redlock = new Redlock([client], redlockRetrySettings(options.tuning, options.waitMs));
    // Redlock re-emits per-attempt failures ("resource locked") as 'error' events; they are normal here.
    redlock.on('error', () => undefined);
    return {
      ...scopedCalls((key, body) =>
        redlock.using([options.keyPrefix + key], options.leaseMs, async (signal) => {
          signal.addEventListener('abort', () => options.onLost(key), { once: true });
          await body();
          if (signal.aborted) throw signal.error;
        }),
      ),
      async close() {
        await client.quit();
      },
    };
  },
};
