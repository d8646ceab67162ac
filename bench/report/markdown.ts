import type { BenchResults, EntrantInfo } from './bench-results.js';
import { num, table } from './format.js';
import { concurrentTable, contendedTable, costTable, overheadTable, sequentialTable, watchdogTable } from './scenario-tables.js';
import { shapesTable } from './shapes-table.js';
import { storesTable } from './stores-table.js';
import { clusterContendedTable, clusterWatchdogTable, replicaAckTable } from './topology-tables.js';

/** The whole report: environment, contenders, one table per scenario that ran, then the targets. */
export function renderMarkdown(results: BenchResults): string {
  const info = new Map(results.entrants.map((entrant) => [entrant.id, entrant]));
  const name = (id: string) => nameOf(info.get(id), id);
  const env = results.environment;
  const c = results.config;
  return [
    `# nestjs-distributed-lock benchmark (${c.mode})`,
    '',
    `${env.startedAt} · ${env.machine.cpuModel}, ${env.machine.cores} cores, ${env.machine.memoryGiB} GiB, ${env.machine.os}, ` +
      `load ${env.machine.loadAverage1m} · Node ${env.node} · Redis ${env.redis.version} ` +
      `(${env.redis.private ? 'private server started by the bench' : 'REDIS_URL'}) · ${num(results.durationSeconds)} s`,
    '',
    `Packages: ${Object.entries(env.packages).map(([pkg, version]) => `${pkg} ${version}`).join(', ')}.`,
    '',
    'Cells are the median over repetitions with min–max in brackets. Repetitions are interleaved (every contender once per round); ' +
      '"× raw", "× fenced" and "× redis-semaphore" are medians of per-round ratios. The machine is shared and noisy: compare ratios within this run, not absolute numbers across runs.',
    ...results.unavailable.flatMap((u) => ['', `Not measured: **${u.id}** — ${u.reason}.`]),
    '',
    '## Contenders and how they wait for a taken key',
    '',
    table(['id', 'what', 'waiting'], results.entrants.map((e) => [e.id, e.label, e.waiting]), 3),
    '',
    `Every lock outside scenario 5: lease ${num(c.leaseMs)} ms, wait budget ${num(c.waitMs)} ms (in each library's own terms).`,
    '',
    ...sequentialTable(results, name),
    ...concurrentTable(results, name),
    ...contendedTable(results, name),
    ...clusterContendedTable(results, name),
    ...costTable(results, name),
    ...watchdogTable(results, name),
    ...clusterWatchdogTable(results),
    ...replicaAckTable(results),
    ...overheadTable(results, name),
    ...storesTable(results),
    ...shapesTable(results),
    '## Targets (issues 6 and 11)',
    '',
    table(
      ['scenario', 'target', 'met', 'measured'],
      results.targets.map((t) => [t.scenario, t.target, t.met === undefined ? 'no data' : t.met ? 'yes' : '**no**', t.measured]),
      4,
    ),
    '',
  ].join('\n');
}

function nameOf(entrant: EntrantInfo | undefined, id: string): string {
  if (!entrant) return id;
  return entrant.tuning === 'tuned' && id.endsWith(':tuned') ? `${entrant.label} — tuned` : entrant.label;
}
