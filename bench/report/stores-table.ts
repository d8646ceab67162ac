import type { BenchResults } from './bench-results.js';
import { num, ratioText, spreadText, table } from './format.js';

/** Scenario 7: one row per store, the first (Redis) as the baseline. */
export function storesTable(results: BenchResults): string[] {
  if (results.stores.length === 0) return [];
  const s = results.config.sequential;
  const c = results.config.contended;
  const baseline = results.stores[0]!.store;
  return [
    `## 7. Stores: the same LockService on each store (${c.repetitions} rounds: ${num(s.durationMs)} ms uncontended, then ${c.workers} workers over ${c.instances} instances on ONE key, hold ${c.holdMs} ms, ${num(c.durationMs)} ms)`,
    '',
    results.stores.map((row) => `- **${row.store}**: ${row.description || 'not started'}${row.error ? ` — failed: ${row.error}` : ''}`).join('\n'),
    '',
    table(
      ['store', 'pairs/s', `× ${baseline}`, 'acquire / release p50 ms', 'CS/s', 'handoff p50 ms', 'handoff p99 ms', 'max wait ms', 'failed acquires', 'overlaps'],
      results.stores.map((row) => [
        row.label,
        spreadText(row.pairsPerSecond),
        ratioText(row.pairsVsBaseline),
        `${num(row.acquireP50Ms.median, 3)} / ${num(row.releaseP50Ms.median, 3)}`,
        spreadText(row.sectionsPerSecond),
        spreadText(row.handoffP50Ms, 2),
        spreadText(row.handoffP99Ms, 1),
        spreadText(row.maxWaitMs),
        String(row.failedAcquires),
        String(row.exclusionViolations),
      ]),
    ),
    '',
  ];
}
