import { throughputRatio } from '../scenarios/throughput-ratio.js';
import type { Spread } from '../support/stats.js';
import type { ContendedRow } from '../scenarios/contended.scenario.js';
import type { BenchResults } from './bench-results.js';

/** One of issue 6's or issue 11's targets, checked against this run. */
export interface TargetCheck {
  readonly scenario: string;
  readonly target: string;
  /** undefined when the run had no data for it (e.g. the decorator is not there yet). */
  readonly met: boolean | undefined;
  readonly measured: string;
}

type Measured = Omit<BenchResults, 'targets'>;

const fmt = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

function atLeast(scenario: string, label: string, ratio: Spread, floor: number, baseline = 'raw'): TargetCheck {
  return {
    scenario,
    target: `${label} ≥ ${floor}× ${baseline} pairs/s`,
    met: ratio.runs > 0 ? ratio.median >= floor : undefined,
    measured: ratio.runs > 0 ? `${fmt(ratio.median)}× (per-round ratios ${fmt(ratio.min)}–${fmt(ratio.max)})` : 'n/a',
  };
}

export function checkTargets(results: Measured): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const [scenario, rows] of [
    ['1 sequential', results.sequential],
    ['2 concurrent', results.concurrent],
  ] as const) {
    checks.push(atLeast(scenario, 'LockService', throughputRatio(rows, 'lock-service', 'raw'), 0.95));
    checks.push(atLeast(scenario, 'decorator', throughputRatio(rows, 'lock-decorator', 'raw'), 0.9));
    // Issue 20: against the fenced floor (what any lock that issues a fencing token makes Redis do).
    checks.push(atLeast(scenario, 'LockService', throughputRatio(rows, 'lock-service', 'fenced'), 0.95, 'fenced'));
    checks.push(atLeast(scenario, 'withLock', throughputRatio(rows, 'with-lock', 'fenced'), 0.9, 'fenced'));
    checks.push(atLeast(scenario, 'decorator', throughputRatio(rows, 'lock-decorator', 'fenced'), 0.9, 'fenced'));
    // Issue 11: at or above redis-semaphore in the same run.
    for (const [label, id] of [
      ['LockService', 'lock-service'],
      ['decorator', 'lock-decorator'],
    ] as const) {
      const ratio = throughputRatio(rows, id, 'redis-semaphore');
      checks.push({
        scenario,
        target: `${label} ≥ 1× redis-semaphore pairs/s`,
        met: ratio.runs > 0 ? ratio.median >= 1 : undefined,
        measured: ratio.runs > 0 ? `${fmt(ratio.median)}× (per-round ratios ${fmt(ratio.min)}–${fmt(ratio.max)})` : 'n/a',
      });
    }
  }

  const pair = results.cost.find((row) => row.entrant === 'lock-service')?.pair;
  checks.push({
    scenario: '4 cost',
    target: 'LockService: 2 round trips per uncontended acquire+release, fencing token included',
    met: pair ? Math.abs(pair.roundTrips - 2) < 0.01 : undefined,
    measured: pair ? `${fmt(pair.roundTrips)} round trips, ${fmt(pair.serverCommands, 1)} server commands per pair` : 'n/a',
  });

  checks.push(...contentionChecks(results));
  // Issue 20's goal 2: the default itself (waiters queue in Redis) as fair as `fair: true`, in commands and waits.
  checks.push(...fairQueueChecks('3 contended, default', results.contended.find((row) => row.entrant === 'lock-service' && !row.error)).slice(1));
  checks.push(...fairQueueChecks('3 contended, fair', results.contended.find((row) => row.entrant === 'lock-service-fair' && !row.error)));
  // Goal 4 asks the Cluster to keep the layout safe (one slot per script) and the queue fair; the latency
  // targets are goal 2's, for one Redis, and are shown in the Cluster's table without a verdict.
  checks.push(...fairQueueChecks('3c Cluster, fair', results.clusterContended.find((row) => row.entrant === 'lock-service-fair')).slice(1));

  const watchdog = results.watchdog.find((row) => row.entrant === 'lock-service' && !row.error);
  if (watchdog) {
    const calls = watchdog.renewCallsPerSecond.median;
    checks.push({
      scenario: '5 watchdog',
      target: `renewal traffic ≤ 1.1× one batched call per interval per batch (${fmt(watchdog.minimumCallsPerSecond, 1)}/s)`,
      met: calls <= 1.1 * watchdog.minimumCallsPerSecond,
      measured: `${fmt(calls, 1)} calls/s = ${fmt(calls / watchdog.minimumCallsPerSecond)}× the minimum`,
    });
    checks.push({
      scenario: '5 watchdog',
      target: `under 5 % of a core while holding ${watchdog.leases} leases`,
      met: watchdog.cpuPercentOfCore.median < 5,
      measured: `${fmt(watchdog.cpuPercentOfCore.median, 1)} % (min–max ${fmt(watchdog.cpuPercentOfCore.min, 1)}–${fmt(watchdog.cpuPercentOfCore.max, 1)})`,
    });
    checks.push({
      scenario: '5 watchdog',
      target: 'no lease lost',
      met: watchdog.lostLeases === 0,
      measured: `${watchdog.lostLeases} lost`,
    });
    checks.push({
      scenario: '5 watchdog',
      target: 'memory per held lease printed',
      met: Number.isFinite(watchdog.heapBytesPerLease.median),
      measured: `${fmt(watchdog.heapBytesPerLease.median, 0)} B of heap per lease (min–max ${fmt(watchdog.heapBytesPerLease.min, 0)}–${fmt(watchdog.heapBytesPerLease.max, 0)})`,
    });
  }
  return checks;
}

/**
 * Issue 11's targets for the fair queue (`fair: true`), on one key, 16 workers on 4 instances: hand-off
 * p50 ≤ 0.15 ms and p99 ≤ 1 ms, ≤ 8 server commands per critical section, nobody starved, the longest
 * single wait at most twice the mean (every run), never two holders.
 */
function fairQueueChecks(scenario: string, row: ContendedRow | undefined): TargetCheck[] {
  if (!row) return [];
  const worstSpread = row.longestOverMeanWait.max;
  return [
    {
      scenario,
      target: 'hand-off p50 ≤ 0.15 ms, p99 ≤ 1 ms (medians over runs)',
      met: row.handoffP50Ms.median <= 0.15 && row.handoffP99Ms.median <= 1,
      measured: `p50 ${fmt(row.handoffP50Ms.median, 3)} ms (${fmt(row.handoffP50Ms.min, 3)}–${fmt(row.handoffP50Ms.max, 3)}), p99 ${fmt(row.handoffP99Ms.median)} ms (${fmt(row.handoffP99Ms.min)}–${fmt(row.handoffP99Ms.max)})`,
    },
    {
      scenario,
      target: '≤ 8 server commands per critical section',
      met: row.commandsPerSection.median <= 8,
      measured: `${fmt(row.commandsPerSection.median)} (${fmt(row.commandsPerSection.min)}–${fmt(row.commandsPerSection.max)})`,
    },
    {
      scenario,
      target: '0 starved workers, longest single wait ≤ 2× the mean (worst run), never two holders',
      met: row.starvedWorkers === 0 && worstSpread <= 2 && row.exclusionViolations === 0 && row.lostLeases === 0,
      measured:
        `${row.starvedWorkers} starved, fewest ${fmt(row.fewestSectionsPerWorker, 0)} CS for one worker, longest wait ${fmt(row.maxWaitMs.max, 0)} ms = ` +
        `${fmt(worstSpread)}× the mean (worst run), ${row.exclusionViolations} overlaps, ${row.lostLeases} leases lost`,
    },
  ];
}

/** Scenario 3: handoff no slower than the best tuned poller, at most a third of its commands, nobody starved. */
function contentionChecks(results: Measured): TargetCheck[] {
  const library = results.contended.find((row) => row.entrant === 'lock-service' && !row.error);
  // withLock and the decorator wait through the same code as LockService: a starved worker in any counts.
  const libraryPaths = results.contended.filter((row) => ['lock-service', 'with-lock', 'lock-decorator'].includes(row.entrant) && !row.error);
  const starved = Math.max(0, ...libraryPaths.map((row) => row.starvedWorkers));
  const overlaps = libraryPaths.reduce((sum, row) => sum + row.exclusionViolations, 0);
  const fewest = Math.min(Infinity, ...libraryPaths.map((row) => row.fewestSectionsPerWorker));
  const longestWait = Math.max(0, ...libraryPaths.map((row) => row.maxWaitMs.max));
  const tunedIds = new Set(results.entrants.filter((e) => e.tuning === 'tuned' && e.role === 'alternative').map((e) => e.id));
  const pollers = results.contended.filter((row) => tunedIds.has(row.entrant) && !row.error && row.failedAcquires === 0);
  const best = [...pollers].sort((a, b) => a.handoffP50Ms.median - b.handoffP50Ms.median)[0];
  if (!library || !best) return [];
  return [
    {
      scenario: '3 contended',
      target: `handoff p50 no worse than the best tuned poller (${best.entrant})`,
      met: library.handoffP50Ms.median <= best.handoffP50Ms.median,
      measured: `${fmt(library.handoffP50Ms.median)} ms vs ${fmt(best.handoffP50Ms.median)} ms`,
    },
    commandsCheck(results, best.entrant, library.commandsPerSection.median, best.commandsPerSection.median),
    {
      scenario: '3 contended',
      target: 'no starved worker, never two holders (LockService, withLock, decorator)',
      met: starved === 0 && overlaps === 0,
      measured:
        `${starved} starved (worst run), fewest ${fmt(fewest, 0)} CS for one worker, ${overlaps} overlaps, ` +
        `longest wait ${fmt(longestWait, 0)} ms (best tuned poller: ${fmt(best.maxWaitMs.max, 0)} ms)`,
    },
  ];
}

/**
 * "Issuing at most a third of its Redis commands": commands a client issues are round trips (scenario 4,
 * MONITOR). Server commands (scenario 3, script-internal calls included) are shown next to them, since one
 * script call of this library runs several commands inside the server.
 */
function commandsCheck(results: Measured, poller: string, libraryServer: number, pollerServer: number): TargetCheck {
  const sections = (id: string) => results.cost.find((row) => row.entrant === id)?.section?.roundTrips ?? NaN;
  const library = sections('lock-service');
  const other = sections(poller);
  return {
    scenario: '3 contended',
    target: `≤ 1/3 of ${poller}'s Redis commands issued per critical section`,
    met: Number.isFinite(library / other) ? library <= other / 3 : undefined,
    measured:
      `round trips/CS ${fmt(library, 1)} vs ${fmt(other, 1)} (${fmt(library / other)}×); ` +
      `server commands/CS ${fmt(libraryServer, 1)} vs ${fmt(pollerServer, 1)} (${fmt(libraryServer / pollerServer)}×)`,
  };
}
