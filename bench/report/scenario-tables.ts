import type { ContendedRow } from '../scenarios/contended.scenario.js';
import type { BenchResults } from './bench-results.js';
import { throughputRatio } from '../scenarios/throughput-ratio.js';
import { breakdown, num, ratioText, spreadText, table, times } from './format.js';

/** Display name of an entrant id. */
export type Namer = (id: string) => string;

const failed = (row: { error?: string }): string => (row.error ? ` — failed: ${row.error}` : '');

/** A titled section, or nothing when the scenario did not run. */
function section(rows: readonly unknown[], title: string, body: () => string[]): string[] {
  return rows.length === 0 ? [] : [title, '', ...body(), ''];
}

/**
 * What scenarios 1 and 2 divide by, paired round by round: the unfenced floor, the fenced floor (the least
 * a lock that issues a fencing token makes Redis do), and the most used alternative.
 */
const BASELINES = ['raw', 'fenced', 'redis-semaphore'] as const;

export function sequentialTable(results: BenchResults, name: Namer): string[] {
  const c = results.config.sequential;
  return section(results.sequential, `## 1. Uncontended, sequential (${c.repetitions} × ${num(c.durationMs)} ms)`, () => [
    table(
      ['contender', 'pairs/s', '× raw', '× fenced', '× redis-semaphore', 'acquire p50 / p99 ms', 'release p50 / p99 ms'],
      results.sequential.map((row) => [
        name(row.entrant) + failed(row),
        spreadText(row.pairsPerSecond),
        ...BASELINES.map((baseline) => ratioText(throughputRatio(results.sequential, row.entrant, baseline))),
        `${num(row.acquireP50Ms.median, 3)} / ${num(row.acquireP99Ms.median, 3)}`,
        `${num(row.releaseP50Ms.median, 3)} / ${num(row.releaseP99Ms.median, 3)}`,
      ]),
    ),
  ]);
}

export function concurrentTable(results: BenchResults, name: Namer): string[] {
  const c = results.config.concurrent;
  return section(
    results.concurrent,
    `## 2. Uncontended, ${c.workers} concurrent workers on distinct keys (${c.repetitions} × ${num(c.durationMs)} ms)`,
    () => [
      table(
        ['contender', 'pairs/s', '× raw', '× fenced', '× redis-semaphore'],
        results.concurrent.map((row) => [
          name(row.entrant) + failed(row),
          spreadText(row.pairsPerSecond),
          ...BASELINES.map((baseline) => ratioText(throughputRatio(results.concurrent, row.entrant, baseline))),
        ]),
      ),
    ],
  );
}

export function contendedTable(results: BenchResults, name: Namer): string[] {
  const c = results.config.contended;
  return section(
    results.contended,
    `## 3. Contended: ${c.workers} workers over ${c.instances} instances on ONE key, hold ${c.holdMs} ms (${c.repetitions} × ${num(c.durationMs)} ms)`,
    () => [
      'Handoff: from one holder leaving the critical section to another worker entering it. Re-grab: the worker that just released got the key straight back. ' +
        'Starved: workers with no critical section in a run (worst run). Longest / mean: the longest single wait of a run over its mean wait. ' +
        'Cmds/CS: server commands per critical section (INFO commandstats, script-internal calls included).',
      '',
      contendedRowsTable(results.contended, name),
    ],
  );
}

/** The contended workload's rows (scenario 3, and its run on a Redis Cluster). */
export function contendedRowsTable(rows: readonly ContendedRow[], name: Namer): string {
  return table(
    ['contender', 'CS/s', 'handoff p50 ms', 'handoff p99 ms', 're-grab', 'max wait ms', 'longest / mean wait', 'starved', 'fewest CS/worker', 'cmds/CS', 'failed acquires', 'overlaps'],
    rows.map((row) => [
      name(row.entrant) + failed(row),
      spreadText(row.sectionsPerSecond),
      spreadText(row.handoffP50Ms, 2),
      spreadText(row.handoffP99Ms, 2),
      `${num(row.regrabShare.median * 100)} %`,
      spreadText(row.maxWaitMs),
      row.longestOverMeanWait ? spreadText(row.longestOverMeanWait, 1) : '–',
      String(row.starvedWorkers),
      num(row.fewestSectionsPerWorker),
      spreadText(row.commandsPerSection, 2),
      String(row.failedAcquires),
      String(row.exclusionViolations),
    ]),
  );
}

export function costTable(results: BenchResults, name: Namer): string[] {
  const c = results.config.cost;
  return section(
    results.cost,
    `## 4. Cost per unit of work (${c.pairs} uncontended pairs; ${num(c.contendedMs)} ms of scenario 3's workload; MONITOR on, not timed)`,
    () => [
      'Round trips: commands clients sent (MONITOR). Server commands: everything the server ran, script-internal calls included (INFO commandstats deltas). ' +
        'Per CS: every critical section of the contended pass, the drain included.',
      '',
      table(
        ['contender', 'round trips / pair', 'server cmds / pair', 'round trips / CS', 'server cmds / CS', 'sent per pair', 'inside scripts per pair'],
        results.cost.map((row) => [
          name(row.entrant) + failed(row),
          num(row.pair?.roundTrips ?? NaN, 2),
          num(row.pair?.serverCommands ?? NaN, 2),
          num(row.section?.roundTrips ?? NaN, 1),
          num(row.section?.serverCommands ?? NaN, 1),
          row.pair ? breakdown(row.pair.sent) : '–',
          row.pair ? breakdown(row.pair.insideScripts) : '–',
        ]),
      ),
    ],
  );
}

export function watchdogTable(results: BenchResults, name: Namer): string[] {
  const c = results.config.watchdog;
  const first = results.watchdog[0];
  return section(
    results.watchdog,
    `## 5. Watchdog at scale: ${num(c.leases)} leases of ${num(c.leaseMs)} ms held ${num(c.holdMs)} ms (${c.repetitions} run${c.repetitions > 1 ? 's' : ''} each)`,
    () => [
      `Minimum: one batched renewal per renew interval (lease / 3) per batch of 1000 leases = ${num(first?.minimumCallsPerSecond ?? NaN, 1)} calls/s. ` +
        'Node CPU: the whole bench process (user + system, all threads) while holding; Redis CPU: the server\'s, same window. ' +
        "Heap: growth after a full GC, per lease (includes the bench's own handle; callback-style APIs hold a pending scope per lease). " +
        'Lost: reported lost during the measured window. The forced GC that measures the heap comes after it and stalls the event loop; ' +
        'leases lost in that stall, and releases that then failed, are shown apart.',
      '',
      table(
        ['contender', 'renew calls/s', '× minimum', 'calls/lease/s', 'Node CPU % of a core', 'Redis CPU %', 'heap B/lease', 'lost', 'lost after GC stall / failed releases'],
        results.watchdog.map((row) => [
          name(row.entrant) + failed(row),
          spreadText(row.renewCallsPerSecond, 1),
          times(row.renewCallsPerSecond.median / row.minimumCallsPerSecond),
          num(row.renewCallsPerLeasePerSecond.median, 3),
          spreadText(row.cpuPercentOfCore, 1),
          spreadText(row.redisCpuPercentOfCore, 1),
          spreadText(row.heapBytesPerLease),
          String(row.lostLeases),
          `${row.lostAfterHeapMeasurement} / ${row.failedReleases}`,
        ]),
      ),
    ],
  );
}

export function overheadTable(results: BenchResults, name: Namer): string[] {
  return section(results.decoratorOverhead, '## 6. Decorator overhead (pairs/s ratios from scenarios 1 and 2, paired by round)', () => [
    table(
      ['path', 'sequential × raw', '64 workers × raw', 'sequential × withLock', '64 workers × withLock'],
      results.decoratorOverhead.map((row) => [
        name(row.entrant),
        ratioText(row.sequentialVsRaw),
        ratioText(row.concurrentVsRaw),
        ratioText(row.sequentialVsWithLock),
        ratioText(row.concurrentVsWithLock),
      ]),
    ),
  ]);
}
