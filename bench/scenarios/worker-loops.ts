import type { LockAdapter } from '../adapters/lock-adapter.js';
import { now, sleep } from '../support/clock.js';
import { quantile } from '../support/stats.js';

export interface LoopPlan {
  readonly workers: number;
  readonly durationMs: number;
  /** Worker `worker`'s key: its own (nobody waits) or one shared by all (they contend). */
  readonly key: (worker: number) => string;
  /** Time inside before the release (a shape's holders overlap only if they stay a while); default 0. */
  readonly holdMs?: number;
}

export interface LoopOutcome {
  /** Pairs done, over the whole time including the last pairs in flight at the stop. */
  readonly pairsPerSecond: number;
  readonly pairs: number;
  /** From asking for the lock to the release resolved: waiting and hold included. */
  readonly pairP50Ms: number;
  /**
   * The longest pair, as a multiple of the mean: how long the unluckiest wait was next to the usual one
   * (a race across instances can leave one worker out for many rounds; a queue cannot).
   */
  readonly longestPairRatio: number;
  /**
   * Most workers inside at once (between acquire and release): at most 1 for a mutex, N for N permits.
   * NaN without a hold (nobody stays inside across an await, so it would always read 1) and when the
   * contender's whole call (`run`) was measured, which the loop cannot look inside.
   */
  readonly maxInside: number;
}

/**
 * `workers` loops of acquire + release for `durationMs`, worker `w` on `plan.key(w)` through adapter
 * `w % adapters.length` (one per application instance). Without a hold, a callback-style contender's own
 * call shape (`run`) is what is timed, so it is not charged for being turned into acquire/release.
 */
export async function workerLoops(adapters: readonly LockAdapter[], plan: LoopPlan): Promise<LoopOutcome> {
  const holdMs = plan.holdMs ?? 0;
  const pairMs: number[] = [];
  const startedAt = now();
  const stopAt = startedAt + plan.durationMs;
  let inside = 0;
  let maxInside = 0;
  let wholeCalls = false;
  await Promise.all(
    Array.from({ length: plan.workers }, async (_, worker) => {
      const adapter = adapters[worker % adapters.length]!;
      const key = plan.key(worker);
      for (let asked = now(); asked < stopAt; asked = now()) {
        if (adapter.run && holdMs === 0) {
          wholeCalls = true;
          await adapter.run(key);
        } else {
          const handle = await adapter.acquire(key);
          maxInside = Math.max(maxInside, ++inside);
          if (holdMs > 0) await sleep(holdMs);
          inside--;
          await handle.release();
        }
        pairMs.push(now() - asked);
      }
    }),
  );
  return {
    pairsPerSecond: (pairMs.length * 1000) / (now() - startedAt),
    pairs: pairMs.length,
    pairP50Ms: quantile(pairMs, 0.5),
    longestPairRatio: pairMs.length === 0 ? NaN : (Math.max(...pairMs) * pairMs.length) / pairMs.reduce((sum, ms) => sum + ms, 0),
    maxInside: wholeCalls || holdMs === 0 ? NaN : maxInside,
  };
}
