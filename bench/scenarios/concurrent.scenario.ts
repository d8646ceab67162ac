import type { Entrant } from '../adapters/contenders.js';
import { spreadOf, type Spread } from '../support/stats.js';
import { openEntrant, type BenchContext, type OpenedEntrant } from './bench-context.js';
import { interleave, OpenedPerEntrant } from './interleave.js';
import { workerLoops } from './worker-loops.js';

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
      const key = (worker: number) => `w${worker}:${repetition}`;
      await workerLoops([adapter], { workers, key, durationMs: warmupMs });
      const { pairsPerSecond } = await workerLoops([adapter], { workers, key, durationMs });
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
