import type { Entrant } from '../adapters/contenders.js';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import { now } from '../support/clock.js';
import { quantile, spreadOf, type Spread } from '../support/stats.js';
import { openEntrant, type BenchContext, type OpenedEntrant } from './bench-context.js';
import { interleave, OpenedPerEntrant } from './interleave.js';

/** One repetition: one worker, one key, acquire then release, as fast as it goes. */
export interface SequentialRun {
  readonly pairsPerSecond: number;
  readonly acquireP50Ms: number;
  readonly acquireP99Ms: number;
  readonly releaseP50Ms: number;
  readonly releaseP99Ms: number;
}

export interface SequentialRow {
  readonly entrant: string;
  readonly pairsPerSecond: Spread;
  /** In round order, for ratios paired by round. */
  readonly pairsPerSecondByRound: number[];
  readonly acquireP50Ms: Spread;
  readonly acquireP99Ms: Spread;
  readonly releaseP50Ms: Spread;
  readonly releaseP99Ms: Spread;
  readonly error?: string;
}

/** Scenario 1: uncontended, sequential acquire+release pairs. */
export async function runSequentialScenario(context: BenchContext, entrants: readonly Entrant[]): Promise<SequentialRow[]> {
  const { repetitions, warmupPairs, durationMs } = context.config.sequential;
  const opened = new OpenedPerEntrant<OpenedEntrant>(
    (entrant) => openEntrant(context, entrant, 's1'),
    ({ adapter }) => adapter.close(),
  );
  try {
    const results = await interleave(context, entrants, repetitions, async (entrant, repetition) => {
      const { adapter } = await opened.get(entrant);
      const key = `seq:${repetition}`;
      await pairs(adapter, key, warmupPairs, Infinity);
      const run = await pairs(adapter, key, Infinity, durationMs);
      context.log(`  s1 ${entrant.id}: ${Math.round(run.pairsPerSecond)} pairs/s`);
      return run;
    });
    return results.map(({ entrant, runs, error }) => ({
      entrant: entrant.id,
      pairsPerSecond: spreadOf(runs, (run) => run.pairsPerSecond),
      pairsPerSecondByRound: runs.map((run) => run.pairsPerSecond),
      acquireP50Ms: spreadOf(runs, (run) => run.acquireP50Ms),
      acquireP99Ms: spreadOf(runs, (run) => run.acquireP99Ms),
      releaseP50Ms: spreadOf(runs, (run) => run.releaseP50Ms),
      releaseP99Ms: spreadOf(runs, (run) => run.releaseP99Ms),
      ...(error ? { error } : {}),
    }));
  } finally {
    await opened.closeAll();
  }
}

/** Acquire+release pairs until `count` pairs are done or `durationMs` has passed. */
export async function pairs(adapter: LockAdapter, key: string, count: number, durationMs: number): Promise<SequentialRun> {
  const acquireMs: number[] = [];
  const releaseMs: number[] = [];
  const startedAt = now();
  const stopAt = startedAt + durationMs;
  let done = 0;
  while (done < count && now() < stopAt) {
    const before = now();
    const handle = await adapter.acquire(key);
    const acquired = now();
    await handle.release();
    releaseMs.push(now() - acquired);
    acquireMs.push(acquired - before);
    done++;
  }
  return {
    pairsPerSecond: (done * 1000) / (now() - startedAt),
    acquireP50Ms: quantile(acquireMs, 0.5),
    acquireP99Ms: quantile(acquireMs, 0.99),
    releaseP50Ms: quantile(releaseMs, 0.5),
    releaseP99Ms: quantile(releaseMs, 0.99),
  };
}
