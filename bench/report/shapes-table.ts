import { SHAPE_BASELINES, type Shape, type ShapesRow } from '../scenarios/shapes.scenario.js';
import { throughputRatio } from '../scenarios/throughput-ratio.js';
import type { BenchResults } from './bench-results.js';
import { num, ratioText, spreadText, table } from './format.js';

const TITLES: Record<Shape, string> = {
  'multi-key': 'Multi-key: a 2-key lock against two nested `withLock`s on the same keys (sorted)',
  semaphore: "Semaphore: `permits` against redis-semaphore's `Semaphore`",
  read: "Read/write: readers (`mode: 'read'`) of one key against plain locks on distinct keys",
};

/** Scenario 9: one table per shape, a row per workload and contender, ratios to the shape's baselines. */
export function shapesTable(results: BenchResults): string[] {
  if (results.shapes.length === 0) return [];
  const c = results.config.shapes;
  return [
    `## 9. Lock shapes (${c.repetitions} × ${num(c.durationMs)} ms per workload)`,
    '',
    'Pair: acquire + release (a scoped call whole, for `withLocks` and nested `withLock`); p50 from asking to the release done, ' +
      'waiting and hold included; longest / mean: the longest pair over the mean one (how long the unluckiest waited). CPU µs/pair: medians, Node (this process) and Redis (INFO cpu); other load moves them less than pairs/s. Cmds/pair: server commands per pair (INFO commandstats, script-internal calls included). ' +
      'Ratios: medians of per-round ratios to the baseline in the same workload.',
    '',
    ...(Object.keys(TITLES) as Shape[]).flatMap((shape) => shapeTable(results.shapes.filter((row) => row.shape === shape), shape)),
  ];
}

function shapeTable(rows: readonly ShapesRow[], shape: Shape): string[] {
  if (rows.length === 0) return [];
  const baselines = SHAPE_BASELINES[shape].filter((id) => rows.some((row) => row.entrant === id));
  const labelOf = (id: string) => rows.find((row) => row.entrant === id)!.label;
  // How many holders were inside at once is the check for shapes that let several in; a 2-key lock has one.
  const showInside = shape !== 'multi-key';
  const waiting = [...new Map(rows.map((row) => [row.label, row.waiting])).entries()];
  return [
    `### ${TITLES[shape]}`,
    '',
    table(
      [
        'workload',
        'contender',
        'pairs/s',
        ...baselines.map((id) => `× ${labelOf(id)}`),
        'p50 ms',
        'longest / mean',
        'CPU µs/pair Node / Redis',
        'cmds/pair',
        ...(showInside ? ['most inside at once'] : []),
      ],
      rows.map((row) => {
        const sameWorkload = rows.filter((other) => other.workload === row.workload);
        return [
          row.workload,
          row.label + (row.error ? ` — failed: ${row.error}` : ''),
          spreadText(row.pairsPerSecond),
          ...baselines.map((id) => ratioText(throughputRatio(sameWorkload, row.entrant, id))),
          spreadText(row.pairP50Ms, 3),
          spreadText(row.longestPairRatio, 1),
          `${num(row.nodeCpuMicrosPerPair.median)} / ${num(row.redisCpuMicrosPerPair.median)}`,
          spreadText(row.commandsPerPair, 1),
          ...(showInside ? [num(row.maxInside)] : []),
        ];
      }),
      2,
    ),
    '',
    waiting.map(([label, how]) => `- ${label}: ${how}`).join('\n'),
    '',
  ];
}
