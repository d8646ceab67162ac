import type { TortureCase } from '../cases';
import type { HistoryRecord } from '../history/records';
import { boundsFor, type Bounds } from './bounds';
import { checkExclusion, checkFencing, checkLossSeen, overlaps } from './exclusion';
import { checkFalseLoss } from './false-loss';
import { checkLeaks } from './leaks';
import { busyByKey, checkLiveness } from './liveness';
import { buildModel, type Model } from './model';
import { checkPolling } from './polling';
import { checkProcesses, checkSameAnswer, checkStartup } from './processes';
import { shapedWaiters } from './shapes';
import { shapeOf } from '../worker/op-plan';
import type { Invariant, Violation } from './violation';
import { faultsDuring } from './windows';

export interface CaseStats {
  readonly operations: number;
  readonly faults: Record<string, number>;
  readonly grants: number;
  /** Grants that went to a call that had waited (more than one attempt, or a queue hand-off). */
  readonly handOffs: number;
  /** The longest stretch of the workload without any grant, and the faults that overlapped it. */
  readonly longestStall: { readonly ms: number; readonly cause: string };
  readonly outcomes: Record<string, number>;
}

export interface CheckResult {
  readonly violations: Violation[];
  readonly byInvariant: Record<Invariant, number>;
  readonly stats: CaseStats;
  readonly model: Model;
  readonly bounds: Bounds;
}

/** Runs every invariant of docs/reliability.md over one case's merged history. */
export function check(records: readonly HistoryRecord[], def: TortureCase): CheckResult {
  const model = buildModel(records);
  const bounds = boundsFor(def);
  const found = overlaps(model);
  const busy = busyByKey(model, def, bounds);
  const shapedKeys = new Set(model.ops.filter((op) => shapeOf(op.kind)).map((op) => op.key));
  const violations = [
    ...checkExclusion(model, def, bounds, found),
    ...checkFencing(model, bounds, found),
    ...checkLiveness(model, bounds, busy, shapedWaiters(model, bounds, shapedKeys)),
    ...checkLeaks(model, def, bounds),
    ...checkLossSeen(model, bounds, found),
    ...checkFalseLoss(model, def, bounds),
    ...checkProcesses(model, bounds),
    ...checkStartup(model, def),
    ...checkSameAnswer(model),
    ...checkPolling(model, bounds),
  ].sort((x, y) => x.at - y.at);
  const byInvariant = { a: 0, b: 0, c: 0, d: 0, e: 0, f: 0, g: 0, h: 0 } as Record<Invariant, number>;
  for (const v of violations) byInvariant[v.invariant]++;
  return { violations, byInvariant, stats: statsOf(model), model, bounds };
}

function statsOf(model: Model): CaseStats {
  const faults: Record<string, number> = {};
  for (const f of model.faults) faults[f.kind] = (faults[f.kind] ?? 0) + 1;
  const outcomes: Record<string, number> = {};
  for (const op of model.ops) outcomes[op.outcome ?? 'unfinished'] = (outcomes[op.outcome ?? 'unfinished'] ?? 0) + 1;
  const grants = model.holds.map((h) => h.grantAt).sort((x, y) => x - y);
  let stall = { from: 0, to: 0 };
  const end = Math.min(model.workloadEnd, model.runEnd);
  for (let i = 1; i <= grants.length; i++) {
    const to = i === grants.length ? end : grants[i]!;
    if (to - grants[i - 1]! > stall.to - stall.from) stall = { from: grants[i - 1]!, to };
  }
  const during = faultsDuring(model, stall);
  return {
    operations: model.ops.length,
    faults,
    grants: model.holds.length,
    handOffs: model.waits.filter((w) => w.ev === 'acquired' && w.attempts > 1).length,
    longestStall: { ms: stall.to - stall.from, cause: during.length ? [...new Set(during.map((f) => f.kind))].join('+') : 'none' },
    outcomes,
  };
}
