import { entrantsFor, type Entrant } from '../adapters/contenders.js';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import { lockServiceContender } from '../adapters/lock-service.adapter.js';
import { redisSemaphoreSemaphoreContender } from '../adapters/redis-semaphore.adapter.js';
import {
  lockSetContender,
  nestedWithLockContender,
  permitsContender,
  readLockContender,
  withLocksContender,
} from '../adapters/shapes.adapters.js';
import { countCommands, readServerCpuSeconds, totalCalls } from '../support/command-stats.js';
import { spreadOf, type Spread } from '../support/stats.js';
import { openEntrant, type BenchContext, type OpenedEntrant } from './bench-context.js';
import { interleave, OpenedPerEntrant } from './interleave.js';
import { workerLoops, type LoopOutcome, type LoopPlan } from './worker-loops.js';

export type Shape = 'multi-key' | 'semaphore' | 'read';

/** What each shape's rows are divided by, round by round: what the shape replaces, or its alternative. */
export const SHAPE_BASELINES: Record<Shape, readonly string[]> = {
  'multi-key': ['nested-with-lock'],
  semaphore: ['redis-semaphore-semaphore', 'redis-semaphore-semaphore:tuned'],
  read: ['lock-service'],
};

export interface ShapesRow {
  readonly shape: Shape;
  readonly workload: string;
  readonly entrant: string;
  /** For the report: the shape contenders are not in the run's contender list. */
  readonly label: string;
  readonly waiting: string;
  readonly pairsPerSecond: Spread;
  /** In round order, for ratios paired by round. */
  readonly pairsPerSecondByRound: number[];
  readonly pairP50Ms: Spread;
  /** The longest pair over the mean pair (see `LoopOutcome.longestPairRatio`). */
  readonly longestPairRatio: Spread;
  /** Server commands (INFO commandstats, script-internal calls included) per pair. */
  readonly commandsPerPair: Spread;
  /**
   * CPU time per pair, in this process (every open instance's timers included, as in the application)
   * and in Redis (INFO cpu, coarse: a few ms of resolution over the round).
   */
  readonly nodeCpuMicrosPerPair: Spread;
  readonly redisCpuMicrosPerPair: Spread;
  /** Server commands per pair by command name, in the last round: where `commandsPerPair` comes from. */
  readonly commandsByName: Record<string, number>;
  /** Most holders inside at once over all rounds; NaN for whole calls (see `LoopOutcome.maxInside`). */
  readonly maxInside: number;
  readonly error?: string;
}

type ShapeRun = LoopOutcome & {
  readonly commandsPerPair: number;
  readonly commandsByName: Record<string, number>;
  readonly nodeCpuMicrosPerPair: number;
  readonly redisCpuMicrosPerPair: number;
};

interface Workload {
  readonly shape: Shape;
  /** Title in the report; rows are compared only within one workload. */
  readonly title: string;
  readonly entrants: readonly Entrant[];
  readonly workers: number;
  /** Workers spread over this many instances (as over pods) when they contend; else all through one. */
  readonly instances: number;
  readonly holdMs: number;
  /** Worker `worker`'s key in round `round`, for this entrant. */
  key(entrant: Entrant, worker: number, round: number): string;
}

/**
 * Scenario 9: this library's lock shapes, each against what users had without it, interleaved round by
 * round on the same Redis: a 2-key lock against two nested `withLock`s on the same keys, a semaphore
 * against redis-semaphore's `Semaphore` (both retry modes where waiting happens), and readers of one key
 * against plain locks on distinct keys (the same parallelism, without sharing a key).
 */
export async function runShapesScenario(context: BenchContext, options: { withRedisSemaphore: boolean }): Promise<ShapesRow[]> {
  const workloads = plan(context, options.withRedisSemaphore);
  const instancesOf = new Map<string, number>();
  for (const workload of workloads) {
    for (const entrant of workload.entrants) instancesOf.set(entrant.id, Math.max(workload.instances, instancesOf.get(entrant.id) ?? 1));
  }
  const opened = new OpenedPerEntrant<OpenedEntrant[]>(
    (entrant) => Promise.all(Array.from({ length: instancesOf.get(entrant.id)! }, () => openEntrant(context, entrant, 's9'))),
    async (instances) => void (await Promise.all(instances.map(({ adapter }) => adapter.close()))),
  );
  const { repetitions, warmupMs, durationMs } = context.config.shapes;
  const rows: ShapesRow[] = [];
  try {
    for (const workload of workloads) {
      const results = await interleave(context, workload.entrants, repetitions, async (entrant, round) => {
        const adapters = (await opened.get(entrant)).slice(0, workload.instances).map(({ adapter }) => adapter);
        const loops = { workers: workload.workers, holdMs: workload.holdMs, key: (worker: number) => workload.key(entrant, worker, round) };
        await workerLoops(adapters, { ...loops, durationMs: warmupMs });
        const run = await timedRun(context, adapters, { ...loops, durationMs });
        context.log(
          `  s9 ${workload.title} · ${entrant.id}: ${Math.round(run.pairsPerSecond)} pairs/s, p50 ${run.pairP50Ms.toFixed(2)} ms, ` +
            `longest ${run.longestPairRatio.toFixed(1)}× the mean, ` +
            `CPU µs/pair ${Math.round(run.nodeCpuMicrosPerPair)} Node, ${Math.round(run.redisCpuMicrosPerPair)} Redis, ` +
            `${run.commandsPerPair.toFixed(1)} cmds/pair (${Object.entries(run.commandsByName).map((entry) => entry.join(' ')).join(', ')})`,
        );
        return run;
      });
      rows.push(...results.map(({ entrant, runs, error }) => rowOf(workload, entrant, runs, error)));
    }
  } finally {
    await opened.closeAll();
  }
  return rows;
}

/**
 * One timed run of the loops, with what it cost per pair: server commands, and CPU in this process and in
 * Redis (on a loaded box other work moves CPU per pair much less than pairs/s).
 */
async function timedRun(context: BenchContext, adapters: readonly LockAdapter[], loops: LoopPlan): Promise<ShapeRun> {
  const redisCpuBefore = await readServerCpuSeconds(context.admin);
  const nodeCpuBefore = process.cpuUsage();
  const { result, commands } = await countCommands(context.admin, () => workerLoops(adapters, loops));
  const nodeCpu = process.cpuUsage(nodeCpuBefore);
  const redisCpuSeconds = (await readServerCpuSeconds(context.admin)) - redisCpuBefore;
  const perPair = (calls: number) => Math.round((calls * 100) / result.pairs) / 100;
  return {
    ...result,
    commandsPerPair: totalCalls(commands) / result.pairs,
    commandsByName: Object.fromEntries([...commands].sort((a, b) => b[1] - a[1]).map(([name, calls]) => [name, perPair(calls)])),
    nodeCpuMicrosPerPair: (nodeCpu.user + nodeCpu.system) / result.pairs,
    redisCpuMicrosPerPair: (redisCpuSeconds * 1e6) / result.pairs,
  };
}

function plan(context: BenchContext, withRedisSemaphore: boolean): Workload[] {
  const { workers, permits, semaphoreWorkers, holdMs } = context.config.shapes;
  const multiKey = entrantsFor([withLocksContender, lockSetContender, nestedWithLockContender], false);
  const semaphores = [
    permitsContender(permits),
    permitsContender(permits, { fair: true }),
    ...(withRedisSemaphore ? [redisSemaphoreSemaphoreContender(permits)] : []),
  ];
  const ownKey = (_entrant: Entrant, worker: number, round: number) => `r${round}:w${worker}`;
  return [
    { shape: 'multi-key', title: 'multi-key pair, 1 worker', entrants: multiKey, workers: 1, instances: 1, holdMs: 0, key: ownKey },
    { shape: 'multi-key', title: `multi-key pairs, ${workers} workers on distinct pairs`, entrants: multiKey, workers, instances: 1, holdMs: 0, key: ownKey },
    // Alone, nobody waits: the retry interval never comes into play, so one mode per contender.
    { shape: 'semaphore', title: `permits: ${permits}, 1 worker`, entrants: entrantsFor(semaphores, false), workers: 1, instances: 1, holdMs: 0, key: ownKey },
    {
      shape: 'semaphore',
      title: `permits: ${permits}, ${semaphoreWorkers} workers over ${context.config.contended.instances} instances on ONE key, hold ${holdMs} ms`,
      entrants: entrantsFor(semaphores, true),
      workers: semaphoreWorkers,
      instances: context.config.contended.instances,
      holdMs,
      key: (_entrant, _worker, round) => `r${round}:hot`,
    },
    // Without a hold, a reader's cost; with one, whether readers share the key (most inside at once).
    ...[0, holdMs].map(
      (hold): Workload => ({
        shape: 'read',
        title: `${workers} readers on ONE key, hold ${hold} ms; plain locks: ${workers} workers on distinct keys`,
        entrants: entrantsFor([readLockContender, lockServiceContender], false),
        workers,
        instances: 1,
        holdMs: hold,
        key: (entrant, worker, round) => (entrant.contender === readLockContender ? `r${round}:h${hold}:shared` : `r${round}:h${hold}:w${worker}`),
      }),
    ),
  ];
}

function rowOf(
  workload: Workload,
  entrant: Entrant,
  runs: readonly ShapeRun[],
  error: string | undefined,
): ShapesRow {
  return {
    shape: workload.shape,
    workload: workload.title,
    entrant: entrant.id,
    label: entrant.tuning === 'tuned' ? `${entrant.contender.label} — tuned` : entrant.contender.label,
    waiting: entrant.waiting,
    pairsPerSecond: spreadOf(runs, (run) => run.pairsPerSecond),
    pairsPerSecondByRound: runs.map((run) => run.pairsPerSecond),
    pairP50Ms: spreadOf(runs, (run) => run.pairP50Ms),
    longestPairRatio: spreadOf(runs, (run) => run.longestPairRatio),
    commandsPerPair: spreadOf(runs, (run) => run.commandsPerPair),
    nodeCpuMicrosPerPair: spreadOf(runs, (run) => run.nodeCpuMicrosPerPair),
    redisCpuMicrosPerPair: spreadOf(runs, (run) => run.redisCpuMicrosPerPair),
    commandsByName: runs.at(-1)?.commandsByName ?? {},
    maxInside: runs.reduce((most, run) => Math.max(most, run.maxInside), runs.length > 0 ? 0 : NaN),
    ...(error ? { error } : {}),
  };
}
