import { INVARIANT_NAMES, type Invariant } from '../checker/violation';
import type { CaseRun } from '../run-case';

const INVARIANTS = Object.keys(INVARIANT_NAMES) as Invariant[];

/**
 * One row per run: operations, faults by kind, grants, hand-offs, the longest stall and what overlapped
 * it, and the violations per invariant (a–h).
 */
export function formatTable(runs: readonly CaseRun[]): string {
  const header = ['case', 'seed', 'ops', 'grants', 'hand-offs', 'longest stall', 'faults', ...INVARIANTS.map((i) => i)];
  const rows = runs.map((run) => {
    const { stats, byInvariant } = run.result;
    const faults = Object.entries(stats.faults)
      .map(([kind, n]) => `${kind}×${n}`)
      .join(' ');
    return [
      run.def.name,
      String(run.seed),
      String(stats.operations),
      String(stats.grants),
      String(stats.handOffs),
      `${(stats.longestStall.ms / 1_000).toFixed(1)} s (${stats.longestStall.cause})`,
      (faults || (run.def.refusedAtStartup ? 'none (refused at startup)' : 'none')) + (run.error ? ' HARNESS ERROR' : ''),
      ...INVARIANTS.map((i) => String(byInvariant[i])),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  const legend = INVARIANTS.map((i) => `${i} = ${INVARIANT_NAMES[i]}`).join(', ');
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line), `violations by invariant: ${legend}`].join('\n');
}
