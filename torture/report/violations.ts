import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHistory } from '../history/history-file';
import type { HistoryRecord } from '../history/records';
import type { Violation } from '../checker/violation';
import type { CaseRun } from '../run-case';

/** Events of the violation's key this far around it make its excerpt. */
const EXCERPT_WINDOW_MS = 3_000;
const EXCERPT_LINES = 40;
/** At most this many violations are printed per invariant; the timeline file has them all. */
const PRINTED_PER_INVARIANT = 3;

/** The line every violation is reported with: invariant, case, seed, when, and what happened. */
export function violationLine(run: CaseRun, v: Violation): string {
  const at = ((v.at - run.result.model.runStart) / 1_000).toFixed(2);
  return `VIOLATION (${v.invariant}) ${run.def.name} seed ${run.seed} at +${at}s: ${v.message}`;
}

/**
 * The report of a run with violations: each (a few per invariant) with the events of its key around it
 * and the faults of that stretch, the replay command, and a timeline file with the whole merged history.
 */
export function formatViolations(run: CaseRun, timelineFile?: string): string {
  const { violations, model } = run.result;
  if (violations.length === 0 && !run.error) return '';
  const records = readHistory(run.dir);
  const file = timelineFile ?? join(run.dir, 'timeline.ndjson');
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const out: string[] = [];
  if (run.error) out.push(`HARNESS ERROR ${run.def.name} seed ${run.seed}: ${run.error}`);
  const printed = new Map<string, number>();
  for (const v of violations) {
    const n = printed.get(v.invariant) ?? 0;
    printed.set(v.invariant, n + 1);
    if (n >= PRINTED_PER_INVARIANT) continue;
    out.push(violationLine(run, v));
    for (const r of excerpt(records, v)) out.push(`    ${formatRecord(r, model.runStart, v.key)}`);
  }
  const hidden = violations.length - [...printed.values()].reduce((sum, n) => sum + Math.min(n, PRINTED_PER_INVARIANT), 0);
  if (hidden > 0) out.push(`… and ${hidden} more violation(s) of the same invariants (see the timeline)`);
  out.push(`timeline: ${file}`);
  out.push(`replay: npm run torture -- --seed ${run.seed} --only ${run.def.name}`);
  return out.join('\n');
}

function excerpt(records: readonly HistoryRecord[], v: Violation): HistoryRecord[] {
  const near = records.filter((r) => Math.abs(r.t - v.at) <= EXCERPT_WINDOW_MS);
  const relevant = near.filter((r) => {
    if (r.type === 'fault') return true;
    if (r.type === 'app') return ['sigstop', 'sigcont', 'sigkill', 'stuck'].includes(r.what);
    if (r.type === 'sample') return v.key !== undefined && (r.locks?.some((l) => l.key === v.key) || r.queues?.some((q) => q.key === v.key));
    return v.key === undefined ? r.type === 'unhandled' : 'key' in r && r.key === v.key && !(r.type === 'ev' && r.ev === 'renewed');
  });
  // The lines closest to the violation, in time order.
  return relevant
    .map((r) => ({ r, d: Math.abs(r.t - v.at) }))
    .sort((x, y) => x.d - y.d)
    .slice(0, EXCERPT_LINES)
    .map(({ r }) => r)
    .sort((x, y) => x.t - y.t);
}

/** One line of an excerpt; a sample shows only what it found of the violation's key. */
function formatRecord(r: HistoryRecord, runStart: number, key: string | undefined): string {
  const { t, p, type, ...rest } = r as HistoryRecord & Record<string, unknown>;
  const at = `+${((t - runStart) / 1_000).toFixed(3)}`;
  if (r.type === 'sample') {
    const locks = r.locks?.filter((lock) => lock.key === key);
    const queues = r.queues?.filter((queue) => queue.key === key).map((queue) => ({ entries: queue.entries.map((e) => ({ holder: e.holder, deadline: `+${((e.deadline - runStart) / 1_000).toFixed(3)}` })) }));
    return `${at} ${p} sample from +${((r.start - runStart) / 1_000).toFixed(3)} ${JSON.stringify({ locks, queues })}`;
  }
  return `${at} ${p} ${type} ${JSON.stringify(rest)}`;
}
