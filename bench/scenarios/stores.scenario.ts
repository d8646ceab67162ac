import type { INestApplicationContext } from '@nestjs/common';
import { DistributedLockModule, LockService } from '../../lib/index.js';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import { openNestContext } from '../adapters/nest-context.js';
import type { BenchStore, StartedBenchStore } from '../stores/bench-store.js';
import { pairedRatio, spreadOf, type Spread } from '../support/stats.js';
import type { BenchContext } from './bench-context.js';
import { contend, type ContentionOutcome } from './contention.workload.js';
import { pairs, type SequentialRun } from './sequential.scenario.js';

export interface StoresRun {
  readonly sequential: SequentialRun;
  readonly contended: ContentionOutcome;
}

export interface StoresRow {
  readonly store: string;
  readonly label: string;
  readonly description: string;
  readonly pairsPerSecond: Spread;
  /** This store's pairs/s over the first store's (Redis), paired by round. */
  readonly pairsVsBaseline: Spread;
  readonly acquireP50Ms: Spread;
  readonly releaseP50Ms: Spread;
  readonly sectionsPerSecond: Spread;
  readonly handoffP50Ms: Spread;
  readonly handoffP99Ms: Spread;
  readonly maxWaitMs: Spread;
  /** Summed over repetitions. */
  readonly failedAcquires: number;
  readonly exclusionViolations: number;
  readonly runs: StoresRun[];
  readonly error?: string;
}

interface Opened {
  readonly started: StartedBenchStore;
  /** One instance for scenario 1's loop, `instances` more for the contended one, like pods. */
  readonly single: LockAdapter;
  readonly instances: LockAdapter[];
}

/**
 * Scenario 7: every store of `bench/stores/` through the same `LockService`, rounds interleaved as in the
 * other scenarios: scenario 1's loop (one worker, acquire + release, uncontended) and scenario 3's
 * workload (workers over instances on ONE key, hold, release: hand-off).
 */
export async function runStoresScenario(context: BenchContext, stores: readonly BenchStore[]): Promise<StoresRow[]> {
  const { warmupPairs, durationMs } = context.config.sequential;
  const { repetitions, instances, ...plan } = context.config.contended;
  const opened = new Map<string, Promise<Opened>>();
  const open = (store: BenchStore): Promise<Opened> => {
    let entry = opened.get(store.id);
    if (!entry) {
      entry = openStore(context, store, instances);
      opened.set(store.id, entry);
    }
    return entry;
  };
  const results = stores.map((store) => ({ store, runs: [] as StoresRun[], description: '', error: undefined as string | undefined }));
  try {
    for (let repetition = 0; repetition < repetitions; repetition++) {
      for (const result of results) {
        if (result.error) continue;
        try {
          const { started, single, instances: adapters } = await open(result.store);
          result.description = started.description;
          await pairs(single, `seq:${repetition}`, warmupPairs, Infinity);
          const sequential = await pairs(single, `seq:${repetition}`, Infinity, durationMs);
          const contended = await contend(adapters, `hot:${repetition}`, plan);
          result.runs.push({ sequential, contended });
          context.log(
            `  s7 ${result.store.id}: ${Math.round(sequential.pairsPerSecond)} pairs/s, ${Math.round(contended.sectionsPerSecond)} CS/s, ` +
              `handoff p50 ${contended.handoffP50Ms.toFixed(2)} ms`,
          );
        } catch (error) {
          result.error = error instanceof Error ? error.message : String(error);
          context.log(`  s7 ${result.store.id}: FAILED ${result.error}`);
        }
      }
    }
  } finally {
    for (const entry of opened.values()) await entry.then(closeStore, () => undefined);
  }
  const baseline = results[0]?.runs.map((run) => run.sequential.pairsPerSecond) ?? [];
  return results.map(({ store, runs, description, error }) => ({
    store: store.id,
    label: store.label,
    description,
    pairsPerSecond: spreadOf(runs, (run) => run.sequential.pairsPerSecond),
    pairsVsBaseline: pairedRatio(
      runs.map((run) => run.sequential.pairsPerSecond),
      baseline,
    ),
    acquireP50Ms: spreadOf(runs, (run) => run.sequential.acquireP50Ms),
    releaseP50Ms: spreadOf(runs, (run) => run.sequential.releaseP50Ms),
    sectionsPerSecond: spreadOf(runs, (run) => run.contended.sectionsPerSecond),
    handoffP50Ms: spreadOf(runs, (run) => run.contended.handoffP50Ms),
    handoffP99Ms: spreadOf(runs, (run) => run.contended.handoffP99Ms),
    maxWaitMs: spreadOf(runs, (run) => run.contended.maxWaitMs),
    failedAcquires: runs.reduce((sum, run) => sum + run.contended.failedAcquires, 0),
    exclusionViolations: runs.reduce((sum, run) => sum + run.contended.exclusionViolations, 0),
    runs,
    ...(error ? { error } : {}),
  }));
}

async function openStore(context: BenchContext, store: BenchStore, instances: number): Promise<Opened> {
  const started = await store.start(context);
  const keyPrefix = `bench:${context.runId}:s7:${store.id}:`;
  const open = async (): Promise<LockAdapter> => {
    const { leaseMs, waitMs } = context.config;
    const app: INestApplicationContext = await openNestContext([
      DistributedLockModule.forRoot({ ...started.options(keyPrefix), leaseMs, waitMs }),
    ]);
    const locks = app.get(LockService);
    return { acquire: (key) => locks.acquire(key), close: () => app.close() };
  };
  try {
    return { started, single: await open(), instances: await Promise.all(Array.from({ length: instances }, open)) };
  } catch (error) {
    await started.stop();
    throw error;
  }
}

async function closeStore({ started, single, instances }: Opened): Promise<void> {
  await Promise.all([single, ...instances].map((adapter) => adapter.close().catch(() => undefined)));
  await started.stop();
}
