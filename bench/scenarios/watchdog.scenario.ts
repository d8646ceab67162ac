import type { Entrant } from '../adapters/contenders.js';
import type { LockHandle } from '../adapters/lock-adapter.js';
import { sleep } from '../support/clock.js';
import { commandDelta, readCommandStats, readServerCpuSeconds, totalCalls } from '../support/command-stats.js';
import { spreadOf, type Spread } from '../support/stats.js';
import { openEntrant, type BenchContext } from './bench-context.js';
import { interleave } from './interleave.js';

/** The library renews every lease of one application in calls of at most this many keys. */
const LIBRARY_RENEW_BATCH = 1000;
/** Acquisitions in flight while filling up: enough to be quick, few enough not to time out. */
const ACQUIRE_CONCURRENCY = 500;
/** Top-level commands a renewal can be: every contender renews through a script. */
const RENEW_COMMANDS = ['evalsha', 'eval'];

export interface WatchdogRun {
  readonly renewCallsPerSecond: number;
  /** Renewal round trips per second per held lease. */
  readonly renewCallsPerLeasePerSecond: number;
  readonly cpuPercentOfCore: number;
  /** What the renewals cost the Redis server, for comparison (noisy when REDIS_URL is shared). */
  readonly redisCpuPercentOfCore: number;
  readonly heapBytesPerLease: number;
  /** Reported lost by the contender up to the end of the measured window. */
  readonly lostLeases: number;
  /** Lost during the forced GC that measures the heap: a stall test, not part of the verdict. */
  readonly lostAfterHeapMeasurement: number;
  readonly failedReleases: number;
}

export interface WatchdogRow {
  readonly entrant: string;
  readonly leases: number;
  readonly leaseMs: number;
  /**
   * One batched call per renew interval per batch of leases: the library's design floor, with its default
   * interval (lease / 3). The same number is shown for every contender, as the yardstick.
   */
  readonly minimumCallsPerSecond: number;
  readonly renewCallsPerSecond: Spread;
  readonly renewCallsPerLeasePerSecond: Spread;
  readonly cpuPercentOfCore: Spread;
  readonly redisCpuPercentOfCore: Spread;
  readonly heapBytesPerLease: Spread;
  /** Summed over repetitions: reported lost by the contender while holding. */
  readonly lostLeases: number;
  /** Summed over repetitions: lost in the GC stall after the window, and releases that failed. */
  readonly lostAfterHeapMeasurement: number;
  readonly failedReleases: number;
  readonly error?: string;
}

/** Scenario 5: hold many leases with a short lease for a fixed time and watch what keeping them costs. */
export async function runWatchdogScenario(context: BenchContext, entrants: readonly Entrant[]): Promise<WatchdogRow[]> {
  const { repetitions, leases, leaseMs, holdMs } = context.config.watchdog;
  const minimumCallsPerSecond = Math.ceil(leases / LIBRARY_RENEW_BATCH) / (Math.floor(leaseMs / 3) / 1000);
  const results = await interleave(context, entrants, repetitions, async (entrant, repetition): Promise<WatchdogRun> => {
    const { adapter, lost } = await openEntrant(context, entrant, `s5r${repetition}`, { leaseMs, waitMs: context.config.waitMs });
    try {
      const heapBefore = settledHeap();
      const handles = await acquireAll((i) => adapter.acquire(`lease:${i}`), leases);
      // One lease length lets renewals settle into their steady rhythm before measuring.
      await sleep(leaseMs);
      const commandsBefore = await readCommandStats(context.admin);
      const redisCpuBefore = await readServerCpuSeconds(context.admin);
      const cpuBefore = process.cpuUsage();
      const startedAt = process.hrtime.bigint();
      await sleep(holdMs);
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      const cpu = process.cpuUsage(cpuBefore);
      const redisCpuSeconds = (await readServerCpuSeconds(context.admin)) - redisCpuBefore;
      const commands = commandDelta(commandsBefore, await readCommandStats(context.admin));
      const lostWhileHolding = lost();
      // Forced full collections stall the event loop (long with a big heap), so they come after the window.
      const heapHeld = settledHeap();
      let failedReleases = 0;
      await Promise.all(handles.map((handle) => handle.release().catch(() => failedReleases++)));
      const renewCallsPerSecond = totalCalls(commands, RENEW_COMMANDS) / seconds;
      const run: WatchdogRun = {
        renewCallsPerSecond,
        renewCallsPerLeasePerSecond: renewCallsPerSecond / leases,
        cpuPercentOfCore: ((cpu.user + cpu.system) / 1e6 / seconds) * 100,
        redisCpuPercentOfCore: (redisCpuSeconds / seconds) * 100,
        heapBytesPerLease: (heapHeld - heapBefore) / leases,
        lostLeases: lostWhileHolding,
        lostAfterHeapMeasurement: lost() - lostWhileHolding,
        failedReleases,
      };
      context.log(
        `  s5 ${entrant.id}: ${run.renewCallsPerSecond.toFixed(1)} renew calls/s (min ${minimumCallsPerSecond.toFixed(1)}), ` +
          `CPU ${run.cpuPercentOfCore.toFixed(1)} % (Redis ${run.redisCpuPercentOfCore.toFixed(1)} %), ${Math.round(run.heapBytesPerLease)} B/lease, lost ${run.lostLeases} ` +
          `(after the GC stall: ${run.lostAfterHeapMeasurement} lost, ${run.failedReleases} failed releases)`,
      );
      return run;
    } finally {
      await adapter.close();
      // A contender's leftover timers (retrying renewals of lost leases) die within one lease; let them,
      // so they do not load the next entrant's measurement.
      await sleep(leaseMs);
    }
  });
  return results.map(({ entrant, runs, error }) => ({
    entrant: entrant.id,
    leases,
    leaseMs,
    minimumCallsPerSecond,
    renewCallsPerSecond: spreadOf(runs, (run) => run.renewCallsPerSecond),
    renewCallsPerLeasePerSecond: spreadOf(runs, (run) => run.renewCallsPerLeasePerSecond),
    cpuPercentOfCore: spreadOf(runs, (run) => run.cpuPercentOfCore),
    redisCpuPercentOfCore: spreadOf(runs, (run) => run.redisCpuPercentOfCore),
    heapBytesPerLease: spreadOf(runs, (run) => run.heapBytesPerLease),
    lostLeases: runs.reduce((sum, run) => sum + run.lostLeases, 0),
    lostAfterHeapMeasurement: runs.reduce((sum, run) => sum + run.lostAfterHeapMeasurement, 0),
    failedReleases: runs.reduce((sum, run) => sum + run.failedReleases, 0),
    ...(error ? { error } : {}),
  }));
}

async function acquireAll(acquire: (i: number) => Promise<LockHandle>, count: number): Promise<LockHandle[]> {
  const handles: LockHandle[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(ACQUIRE_CONCURRENCY, count) }, async () => {
      while (next < count) {
        const i = next++;
        handles[i] = await acquire(i);
      }
    }),
  );
  return handles;
}

/** Heap in use after a full collection (needs node --expose-gc; NaN without it). */
function settledHeap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return NaN;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
