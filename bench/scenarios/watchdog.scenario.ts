import calculateSlot from 'cluster-key-slot';
import { DistributedLockModule, LockEvents, LockService } from '../../lib/index.js';
import type { RedisCluster } from '../../scripts/servers/redis-cluster.js';
import { askRedis } from '../../scripts/servers/server-probes.js';
import type { Entrant } from '../adapters/contenders.js';
import { openNestContext } from '../adapters/nest-context.js';
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

async function acquireAll<H>(acquire: (i: number) => Promise<H>, count: number): Promise<H[]> {
  const handles: H[] = new Array(count);
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

/** Scenario 5 on a Redis Cluster: what renewing many leases costs in calls per renew interval. */
export interface ClusterWatchdogRow {
  readonly masters: number;
  readonly leases: number;
  readonly leaseMs: number;
  /** Distinct hash slots the leases' keys fall in: the calls per interval a per-slot batching would need. */
  readonly slots: number;
  /** Top-level EVALSHA/EVAL calls on all masters per renew interval (lease / 3), median over repetitions. */
  readonly callsPerInterval: Spread;
  /** The design floor: one call per node per interval per batch of 1000 leases on that node. */
  readonly minimumCallsPerInterval: number;
  readonly lostLeases: number;
  readonly error?: string;
}

/**
 * Holds `leases` leases through this library on a private 3-master Cluster and counts the renewal calls
 * every master receives (INFO commandstats, summed), per renew interval. Renewals are grouped per node with
 * cross-slot scripts, so this should be about one call per master per interval, not one per hash slot.
 */
export async function runClusterWatchdog(context: BenchContext, cluster: RedisCluster): Promise<ClusterWatchdogRow> {
  const { repetitions, leases, leaseMs, holdMs } = context.config.watchdog;
  const masters = async () => (await cluster.topology()).filter((node) => node.role === 'master' && !node.failing);
  const renewCalls = async (): Promise<number> => {
    let total = 0;
    for (const node of await masters()) {
      const text = await askRedis(node.port, (redis) => redis.info('commandstats'));
      for (const command of RENEW_COMMANDS) total += Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    }
    return total;
  };
  const intervalSeconds = Math.floor(leaseMs / 3) / 1000;
  const keyPrefix = `bench:${context.runId}:s5c:`;
  const perMaster = new Map<number, number>();
  const masterList = await masters();
  for (let i = 0; i < leases; i++) {
    const slot = calculateSlot(`${keyPrefix}lease:${i}`);
    const owner = masterList.find((node) => node.slots.some(([a, b]) => a <= slot && slot <= b))!;
    perMaster.set(owner.port, (perMaster.get(owner.port) ?? 0) + 1);
  }
  const row = {
    masters: masterList.length,
    leases,
    leaseMs,
    slots: new Set(Array.from({ length: leases }, (_, i) => calculateSlot(`${keyPrefix}lease:${i}`))).size,
    minimumCallsPerInterval: [...perMaster.values()].reduce((sum, count) => sum + Math.ceil(count / LIBRARY_RENEW_BATCH), 0),
  };
  let lost = 0;
  const runs: number[] = [];
  try {
    for (let repetition = 0; repetition < repetitions; repetition++) {
      const app = await openNestContext([
        DistributedLockModule.forRoot({ redis: { cluster: cluster.seeds.map(({ host, port }) => ({ host, port })) }, keyPrefix, leaseMs }),
      ]);
      app.get(LockEvents).on('lost', () => lost++);
      try {
        const locks = app.get(LockService);
        const handles = await acquireAll((i) => locks.acquire(`lease:${i}`, { waitMs: 0 }), leases);
        await sleep(leaseMs);
        const before = await renewCalls();
        const startedAt = process.hrtime.bigint();
        await sleep(holdMs);
        const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
        const calls = (await renewCalls()) - before;
        runs.push((calls / seconds) * intervalSeconds);
        context.log(
          `  s5 lock-service on a Cluster (${row.masters} masters): ${runs.at(-1)!.toFixed(1)} renew calls per interval for ${leases} leases ` +
            `over ${row.slots} slots (per-slot batching: ${row.slots}; minimum ${row.minimumCallsPerInterval}), lost ${lost}`,
        );
        await Promise.all(handles.map((handle) => handle.release().catch(() => undefined)));
      } finally {
        await app.close();
      }
    }
    return { ...row, callsPerInterval: spreadOf(runs, (run) => run), lostLeases: lost };
  } catch (error) {
    return { ...row, callsPerInterval: spreadOf(runs, (run) => run), lostLeases: lost, error: error instanceof Error ? error.message : String(error) };
  }
}
