import type { Entrant } from '../adapters/contenders.js';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import { now } from '../support/clock.js';
import { spreadOf, type Spread } from '../support/stats.js';
import { openEntrant, type BenchContext, type OpenedEntrant } from './bench-context.js';
import { interleave, OpenedPerEntrant } from './interleave.js';

export interface ConcurrentRow {
  readonly entrant: string;
  readonly pairsPerSecond: Spread;
  /** In round order, for ratios paired by round. */
  readonly pairsPerSecondByRound: number[];
  readonly error?: string;
}

/**
 * Scenario 2: many workers on distinct keys through one adapter (one application instance). Nobody ever
 * waits for a key, so this measures client-side cost per pair: on one Node thread, every microsecond a
 * library spends per lock shows up as lost throughput. Each contender runs its own call shape (see
 * `LockAdapter.run`): a decorated method is called, not turned into acquire/release.
 */
export async function runConcurrentScenario(context: BenchContext, entrants: readonly Entrant[]): Promise<ConcurrentRow[]> {
  const { repetitions, workers, warmupMs, durationMs } = context.config.concurrent;
  const opened = new OpenedPerEntrant<OpenedEntrant>(
    (entrant) => openEntrant(context, entrant, 's2'),
    ({ adapter }) => adapter.close(),
  );
  try {
    const results = await interleave(context, entrants, repetitions, async (entrant, repetition) => {
      const { adapter } = await opened.get(entrant);
      await pairsFromWorkers(adapter, workers, `${repetition}`, warmupMs);
      const pairsPerSecond = await pairsFromWorkers(adapter, workers, `${repetition}`, durationMs);
      context.log(`  s2 ${entrant.id}: ${Math.round(pairsPerSecond)} pairs/s`);
      return { pairsPerSecond };
    });
    return results.map(({ entrant, runs, error }) => ({
      entrant: entrant.id,
      pairsPerSecond: spreadOf(runs, (run) => run.pairsPerSecond),
      pairsPerSecondByRound: runs.map((run) => run.pairsPerSecond),
      ...(error ? { error } : {}),
    }));
  } finally {
    await opened.closeAll();
  }
}

/** Pairs per second of `workers` loops, each on its own key, for `durationMs`. */
async function pairsFromWorkers(adapter: LockAdapter, workers: number, round: string, durationMs: number): Promise<number> {
  const startedAt = now();
  const stopAt = startedAt + durationMs;
  let done = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const key = `w${worker}:${round}`;
      while (now() < stopAt) {
        if (adapter.run) await adapter.run(key);
        else await (await adapter.acquire(key)).release();
        done++;
      }
    }),
  );
  return (done * 1000) / (now() - startedAt);
}
