import type { Bounds } from './bounds';
import type { Interval } from './intervals';
import { believedEnd, expiryAt, type Hold, type Model } from './model';
import type { Violation } from './violation';

/**
 * The shaped holds' rules (read/write locks and semaphores, docs/lock-shapes.md), beside the plain ones of
 * exclusion.ts. The workload keeps one shape per key (its read/write keys and its semaphore keys), so a
 * key's holds are all plain or all shaped.
 */

/** Two holds of one key that may not both be held, as exclusion.ts judges them. */
export interface Overlap {
  readonly older: Hold;
  readonly newer: Hold;
  readonly span: Interval;
  /**
   * A semaphore's: `holders` held at once at the newer grant (the newer one included) where `permits` may.
   * One such overlap per older holder: exclusion is broken only if too many of them are unexcused.
   */
  readonly excess?: { readonly holders: number; readonly permits: number };
}

export function isShaped(holds: readonly Hold[]): boolean {
  return holds.some((h) => h.shape !== undefined);
}

/**
 * The conflicts among one key's shaped holds, in grant order: a writer held with anybody else (a reader,
 * another writer), and a permit granted while its N (or more) others still held. Readers together, and up
 * to N permit holders, are the shapes' point, not overlaps.
 */
export function shapedOverlaps(holds: readonly Hold[], runEnd: number): Overlap[] {
  const found: Overlap[] = [];
  const sorted = [...holds].sort((x, y) => x.grantAt - y.grantAt);
  for (let j = 0; j < sorted.length; j++) {
    const newer = sorted[j]!;
    const held = sorted.slice(0, j).filter((older) => newer.grantAt < believedEnd(older, runEnd));
    const span = (older: Hold): Interval => ({ from: newer.grantAt, to: Math.min(believedEnd(older, runEnd), believedEnd(newer, runEnd)) });
    if (newer.shape === 'permits') {
      const permits = newer.permits ?? 1;
      if (held.length < permits) continue;
      for (const older of held) found.push({ ...ordered(older, newer), span: span(older), excess: { holders: held.length + 1, permits } });
      continue;
    }
    for (const older of held) if (newer.shape === 'write' || older.shape === 'write') found.push({ ...ordered(older, newer), span: span(older) });
  }
  return found;
}

function ordered(a: Hold, b: Hold): { older: Hold; newer: Hold } {
  return a.fence <= b.fence ? { older: a, newer: b } : { older: b, newer: a };
}

/**
 * (b) for shaped keys. Holders share the key, so the order in which they learnt of their grants says
 * nothing of the order the store made them; but a hold that ended before another's operation began was
 * granted before it, so its fencing token must be lower (one counter serves every shape of a key).
 */
export function checkShapedFencing(model: Model, key: string, holds: readonly Hold[]): Violation[] {
  const started = new Map(model.ops.map((op) => [`${op.actor}/${op.op}`, op.start]));
  const byEnd = holds.map((h) => ({ h, end: believedEnd(h, model.runEnd) })).sort((x, y) => x.end - y.end);
  // The highest fence among the holds that ended by each point of `byEnd`, and whose it was.
  const highest: Hold[] = [];
  for (const { h } of byEnd) highest.push(highest.length && highest[highest.length - 1]!.fence >= h.fence ? highest[highest.length - 1]! : h);
  const violations: Violation[] = [];
  for (const h of holds) {
    const start = started.get(`${h.actor}/${h.op}`) ?? h.grantAt;
    let lo = 0;
    let hi = byEnd.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byEnd[mid]!.end < start) lo = mid + 1;
      else hi = mid;
    }
    const before = lo > 0 ? highest[lo - 1]! : undefined;
    if (!before || before.fence < h.fence) continue;
    violations.push({
      invariant: 'b',
      key,
      at: h.grantAt,
      message: `"${key}" granted to ${h.actor} (${h.shape}) with fence ${JSON.stringify(h.fence) ?? 'undefined'}, not above ${before.actor}'s ${JSON.stringify(before.fence) ?? 'undefined'} (${before.shape}), which ended before the operation began`,
    });
  }
  return violations;
}

/**
 * Whether the older holder of an overlap must have lost its hold for the newer grant (rule (e) then asks
 * that it learnt so in time): always for a writer's conflicts; for a semaphore's excess, only a holder whose
 * own deadline had passed by the newer grant (the others may have held on with it, within N).
 */
export function mustHaveLost(overlap: Overlap): boolean {
  return !overlap.excess || expiryAt(overlap.older, overlap.newer.grantAt) <= overlap.newer.grantAt;
}

/**
 * When each shaped key stands in somebody's way besides its holds, per operation (a wait is not in its own
 * way): a waiting operation stands in the key's line from its start to its end, which turns single attempts
 * away and keeps later waiters behind it; a waiting writer's first attempt marks it waiting, which keeps
 * new readers out for `2 × retryMaxDelayMs + commandTimeoutMs` after its last attempt.
 */
export function shapedWaiters(model: Model, bounds: Bounds, shapedKeys: ReadonlySet<string>): Map<string, Array<{ op: string; span: Interval }>> {
  const byKey = new Map<string, Array<{ op: string; span: Interval }>>();
  for (const op of model.ops) {
    if (op.single || !shapedKeys.has(op.key)) continue;
    const end = (op.end ?? model.procs.get(op.actor)?.diedAt ?? model.runEnd) + (op.kind === 'write' ? bounds.writerMarkMs : 0);
    if (!byKey.has(op.key)) byKey.set(op.key, []);
    byKey.get(op.key)!.push({ op: op.op, span: { from: op.start, to: end + bounds.slackMs } });
  }
  return byKey;
}
