import type { Entrant } from '../adapters/contenders.js';
import { countCommands, totalCalls } from '../support/command-stats.js';
import { spreadOf, type Spread } from '../support/stats.js';
import { openEntrant, type BenchContext, type OpenedEntrant } from './bench-context.js';
import { contend, type ContentionOutcome } from './contention.workload.js';
import { interleave, OpenedPerEntrant } from './interleave.js';

export interface ContendedRun extends ContentionOutcome {
  /** Server commands (INFO commandstats, script-internal calls included) per critical section. */
  readonly commandsPerSection: number;
  /** The commands behind that number, summed over the run. */
  readonly commands: Record<string, number>;
}

export interface ContendedRow {
  readonly entrant: string;
  readonly sectionsPerSecond: Spread;
  readonly handoffP50Ms: Spread;
  readonly handoffP99Ms: Spread;
  readonly regrabShare: Spread;
  readonly maxWaitMs: Spread;
  readonly meanWaitMs: Spread;
  /** Longest single wait over the mean wait, per run: how unevenly the key was shared. */
  readonly longestOverMeanWait: Spread;
  readonly commandsPerSection: Spread;
  /** Worst repetition. */
  readonly starvedWorkers: number;
  readonly fewestSectionsPerWorker: number;
  /** Summed over all repetitions. */
  readonly failedAcquires: number;
  readonly exclusionViolations: number;
  readonly lostLeases: number;
  readonly runs: ContendedRun[];
  readonly error?: string;
}

/** One entrant's runs of the contended workload as a report row (also used for the Cluster variant). */
export function contendedRow(entrant: string, runs: ContendedRun[], lostLeases: number, error?: string): ContendedRow {
  return {
    entrant,
    sectionsPerSecond: spreadOf(runs, (run) => run.sectionsPerSecond),
    handoffP50Ms: spreadOf(runs, (run) => run.handoffP50Ms),
    handoffP99Ms: spreadOf(runs, (run) => run.handoffP99Ms),
    regrabShare: spreadOf(runs, (run) => run.regrabShare),
    maxWaitMs: spreadOf(runs, (run) => run.maxWaitMs),
    meanWaitMs: spreadOf(runs, (run) => run.meanWaitMs),
    longestOverMeanWait: spreadOf(runs, (run) => run.maxWaitMs / run.meanWaitMs),
    commandsPerSection: spreadOf(runs, (run) => run.commandsPerSection),
    starvedWorkers: Math.max(0, ...runs.map((run) => run.starvedWorkers)),
    fewestSectionsPerWorker: Math.min(Infinity, ...runs.map((run) => run.fewestSectionsPerWorker)),
    failedAcquires: runs.reduce((sum, run) => sum + run.failedAcquires, 0),
    exclusionViolations: runs.reduce((sum, run) => sum + run.exclusionViolations, 0),
    lostLeases,
    runs,
    ...(error ? { error } : {}),
  };
}

/** Scenario 3: 16 workers over 4 instances on ONE key, hold 1 ms, release. */
export async function runContendedScenario(context: BenchContext, entrants: readonly Entrant[]): Promise<ContendedRow[]> {
  const { repetitions, instances, ...plan } = context.config.contended;
  const opened = new OpenedPerEntrant<OpenedEntrant[]>(
    (entrant) => Promise.all(Array.from({ length: instances }, () => openEntrant(context, entrant, 's3'))),
    async (all) => void (await Promise.all(all.map(({ adapter }) => adapter.close()))),
  );
  try {
    const results = await interleave(context, entrants, repetitions, async (entrant, repetition) => {
      const adapters = (await opened.get(entrant)).map(({ adapter }) => adapter);
      const { result, commands } = await countCommands(context.admin, () => contend(adapters, `hot:${repetition}`, plan));
      const run: ContendedRun = {
        ...result,
        commandsPerSection: totalCalls(commands) / Math.max(1, result.sections),
        commands: Object.fromEntries(commands),
      };
      context.log(`  s3 ${entrant.id}: ${describeContendedRun(run)}`);
      return run;
    });
    return Promise.all(
      results.map(async ({ entrant, runs, error }) =>
        contendedRow(entrant.id, runs, error ? 0 : (await opened.get(entrant)).reduce((sum, { lost }) => sum + lost(), 0), error),
      ),
    );
  } finally {
    await opened.closeAll();
  }
}

export function describeContendedRun(run: ContendedRun): string {
  return (
    `${Math.round(run.sectionsPerSecond)} CS/s, handoff p50 ${run.handoffP50Ms.toFixed(2)} / p99 ${run.handoffP99Ms.toFixed(2)} ms, ` +
    `${run.commandsPerSection.toFixed(2)} cmds/CS, starved ${run.starvedWorkers}, longest wait ${run.maxWaitMs.toFixed(0)} ms ` +
    `(${(run.maxWaitMs / run.meanWaitMs).toFixed(1)}× the mean)`
  );
}
