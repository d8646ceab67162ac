import type { Entrant } from '../adapters/contenders.js';
import { CommandMonitor, sourceAddress, type MonitoredTraffic } from '../support/command-monitor.js';
import { countCommands, totalCalls } from '../support/command-stats.js';
import { openEntrant, type BenchContext } from './bench-context.js';
import { contend } from './contention.workload.js';
import { pairs } from './sequential.scenario.js';

/** Redis cost of one unit of work (an uncontended pair, or one critical section under contention). */
export interface UnitCost {
  readonly units: number;
  /** Commands sent by clients (MONITOR): what latency is made of. */
  readonly roundTrips: number;
  /** All commands the server ran (INFO commandstats deltas), script-internal calls included. */
  readonly serverCommands: number;
  /** Per unit, by command: sent by clients, and run inside scripts. */
  readonly sent: Record<string, number>;
  readonly insideScripts: Record<string, number>;
}

export interface CostRow {
  readonly entrant: string;
  readonly pair?: UnitCost;
  /** From a short monitored contended run (scenario 3's workload). */
  readonly section?: UnitCost;
  readonly error?: string;
}

/**
 * Scenario 4: counts, not timings. A single pass per entrant with MONITOR on (which slows the server, so
 * nothing here is timed): uncontended pairs, then a short run of scenario 3's contended workload.
 */
export async function runCostScenario(
  context: BenchContext,
  pairEntrants: readonly Entrant[],
  contendedEntrants: readonly Entrant[],
): Promise<CostRow[]> {
  const rows = new Map<string, Mutable<CostRow>>();
  const rowFor = (entrant: Entrant): Mutable<CostRow> => {
    let row = rows.get(entrant.id);
    if (!row) rows.set(entrant.id, (row = { entrant: entrant.id }));
    return row;
  };
  const monitor = await CommandMonitor.start(context.redisUrl, await sourceAddress(context.admin));
  try {
    for (const entrant of pairEntrants) {
      const row = rowFor(entrant);
      await measure(row, async () => (row.pair = await pairCost(context, monitor, entrant)));
    }
    if (context.config.cost.contendedMs > 0) {
      for (const entrant of contendedEntrants) {
        const row = rowFor(entrant);
        await measure(row, async () => (row.section = await sectionCost(context, monitor, entrant)));
      }
    }
  } finally {
    await monitor.stop();
  }
  for (const row of rows.values()) context.log(`  s4 ${row.entrant}: ${describe(row)}`);
  return [...rows.values()];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

async function pairCost(context: BenchContext, monitor: CommandMonitor, entrant: Entrant): Promise<UnitCost> {
  const count = context.config.cost.pairs;
  const { adapter } = await openEntrant(context, entrant, 's4');
  try {
    // The first script call on a server can be an EVAL after NOSCRIPT: once per run, not per pair.
    await pairs(adapter, 'pair', 5, Infinity);
    return await measureUnits(context, monitor, async () => (await pairs(adapter, 'pair', count, Infinity), count));
  } finally {
    await adapter.close();
  }
}

async function sectionCost(context: BenchContext, monitor: CommandMonitor, entrant: Entrant): Promise<UnitCost> {
  const { workers, holdMs, instances } = context.config.contended;
  const opened = await Promise.all(Array.from({ length: instances }, () => openEntrant(context, entrant, 's4')));
  const adapters = opened.map(({ adapter }) => adapter);
  try {
    await pairs(adapters[0]!, 'warm-up', 5, Infinity);
    return await measureUnits(context, monitor, async () => {
      const outcome = await contend(adapters, 'hot', { workers, holdMs, durationMs: context.config.cost.contendedMs });
      return outcome.sections;
    });
  } finally {
    await Promise.all(adapters.map((adapter) => adapter.close()));
  }
}

async function measure(row: { error?: string }, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    row.error = error instanceof Error ? error.message : String(error);
  }
}

async function measureUnits(context: BenchContext, monitor: CommandMonitor, work: () => Promise<number>): Promise<UnitCost> {
  await monitor.take(context.admin);
  const { result: units, commands } = await countCommands(context.admin, work);
  const traffic: MonitoredTraffic = await monitor.take(context.admin);
  const perUnit = (counts: Map<string, number>): Record<string, number> =>
    Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).map(([name, calls]) => [name, round(calls / units)]));
  return {
    units,
    roundTrips: totalCalls(traffic.roundTrips) / units,
    serverCommands: totalCalls(commands) / units,
    sent: perUnit(traffic.roundTrips),
    insideScripts: perUnit(traffic.insideScripts),
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function describe(row: { pair?: UnitCost; section?: UnitCost; error?: string }): string {
  if (row.error) return `FAILED ${row.error}`;
  const unit = (name: string, cost?: UnitCost) =>
    cost ? `${round(cost.roundTrips)} round trips, ${round(cost.serverCommands)} cmds per ${name}` : '';
  return [unit('pair', row.pair), unit('CS', row.section)].filter(Boolean).join('; ');
}
