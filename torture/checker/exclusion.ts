import type { TortureCase } from '../cases';
import type { Bounds } from './bounds';
import { meets, type Interval } from './intervals';
import { believedEnd, expiryAt, type Hold, type Model } from './model';
import { checkShapedFencing, isShaped, mustHaveLost, shapedOverlaps, type Overlap } from './shapes';
import type { Violation } from './violation';
import { failoverWindows } from './windows';

/** Every hold, by its key. */
export function holdsByKey(model: Model): Map<string, Hold[]> {
  const byKey = new Map<string, Hold[]>();
  for (const h of model.holds) {
    if (!byKey.has(h.key)) byKey.set(h.key, []);
    byKey.get(h.key)!.push(h);
  }
  return byKey;
}

export type { Overlap };

/**
 * Two holds of one key whose holders both believed, for a while, that they held it; for a read/write key
 * or a semaphore's, two that may not both hold it (see shapes.ts).
 */
export function overlaps(model: Model): Overlap[] {
  const found: Overlap[] = [];
  for (const holds of holdsByKey(model).values()) {
    if (isShaped(holds)) {
      found.push(...shapedOverlaps(holds, model.runEnd));
      continue;
    }
    holds.sort((x, y) => x.grantAt - y.grantAt);
    for (let i = 0; i < holds.length; i++) {
      for (let j = i + 1; j < holds.length; j++) {
        const [a, b] = [holds[i]!, holds[j]!];
        if (b.grantAt >= believedEnd(a, model.runEnd)) continue;
        const older = a.fence <= b.fence ? a : b;
        const newer = older === a ? b : a;
        found.push({ older, newer, span: { from: b.grantAt, to: Math.min(believedEnd(a, model.runEnd), believedEnd(b, model.runEnd)) } });
      }
    }
  }
  return found;
}

/** An accepted write during `span` whose read had been overwritten before it landed: a lost update. */
function lostUpdate(h: Hold, span: Interval): boolean {
  return !h.rolledBack && h.writes.some((w) => w.accepted && w.t >= span.from && w.t <= span.to + 50 && w.before !== w.read);
}

/**
 * (a) Exclusion. A holder interval runs from the grant as its holder recorded it (after the store granted
 * it) to the end of its section (recorded before the release is sent), its loss learnt, or its death: it
 * lies inside the store's own interval, so two of them that overlap overlapped at the store too. Allowed
 * only (1) inside a failover window of a topology whose exclusion is fencing-backed, (2) when the older
 * holder was frozen (SIGSTOP) across the newer grant, its lease running out unseen, or (3) when the older
 * holder's loss timer fired late by at most the slack; and in every case only if the register refused
 * each write the older holder made during the overlap and no write lost an update.
 */
export function checkExclusion(model: Model, def: TortureCase, bounds: Bounds, found: readonly Overlap[]): Violation[] {
  const windows = failoverWindows(model, def, bounds);
  const violations: Violation[] = [];
  // A semaphore's excess is a violation only when fewer of its older holders are excused than the excess.
  const excess = new Map<Hold, { unexcused: Overlap[]; holders: number; permits: number }>();
  for (const overlap of found) {
    const { older, newer, span } = overlap;
    // In register order (the value each write found, which the register reports): an older holder's write
    // accepted before the newer holder's first accepted one may have been sent before a freeze and recorded
    // only when its process ran again; one accepted after it is what fencing must refuse.
    const newerFirst = Math.min(...newer.writes.filter((w) => w.accepted).map((w) => w.before));
    const olderWrites = older.writes.filter((w) => w.t >= span.from && w.t <= span.to + 50 && !(w.accepted && w.before < newerFirst));
    const fenced = olderWrites.every((w) => !w.accepted) && !lostUpdate(older, span) && !lostUpdate(newer, span);
    const paused = model.procs.get(older.actor)?.pauses.some((p) => p.from <= newer.grantAt && p.to >= newer.grantAt - bounds.leaseMaxMs);
    const lateTimer = older.lossAt !== undefined && older.lossAt - span.from <= bounds.slackMs;
    const excused = meets(windows, span) ? 'failover window' : paused ? 'older holder frozen' : lateTimer ? 'loss timer late' : undefined;
    if (overlap.excess) {
      const group = excess.get(newer) ?? { unexcused: [], ...overlap.excess };
      excess.set(newer, group);
      if (!(excused && fenced)) group.unexcused.push(overlap);
      continue;
    }
    if (excused && fenced) continue;
    const why = excused ? `inside a ${excused}, but the register accepted the older holder's writes or lost an update` : 'outside any failover window';
    violations.push({
      invariant: 'a',
      key: older.key,
      at: span.from,
      message: `"${older.key}" held by ${older.actor} (fence ${older.fence}${shapeNote(older)}) and ${newer.actor} (fence ${newer.fence}${shapeNote(newer)}) at once for ${span.to - span.from} ms, ${why}`,
    });
  }
  for (const [newer, { unexcused, holders, permits }] of excess) {
    // The newer grant and its unexcused co-holders are more than N: somebody held a permit that was not free.
    if (unexcused.length < permits) continue;
    const span = unexcused.reduce((shortest, o) => (o.span.to < shortest.to ? o.span : shortest), unexcused[0]!.span);
    violations.push({
      invariant: 'a',
      key: newer.key,
      at: span.from,
      message: `"${newer.key}" held by ${holders} at once, ${permits} permits: ${newer.actor} (fence ${newer.fence}) granted while ${unexcused.map((o) => `${o.older.actor} (fence ${o.older.fence})`).join(', ')} still held it, for ${span.to - span.from} ms, outside any failover window`,
    });
  }
  return violations;
}

function shapeNote(h: Hold): string {
  return h.shape ? `, ${h.shape}` : '';
}

/**
 * (b) Fencing. In grant order, each key's tokens strictly increase (holds that overlapped are (a)'s); the
 * register never accepted a token below one it had accepted before, in the register's own order.
 */
export function checkFencing(model: Model, bounds: Bounds, found: readonly Overlap[]): Violation[] {
  const violations: Violation[] = [];
  const overlapping = new Set(found.flatMap((o) => [o.older, o.newer]));
  for (const [key, holds] of holdsByKey(model)) {
    if (isShaped(holds)) violations.push(...checkShapedFencing(model, key, holds));
    // A grant its holder learnt of only after its own deadline (a reply read after a freeze) was never held:
    // the library reports it lost at once. When the store made it, nobody here can tell.
    const held = isShaped(holds) ? [] : holds.filter((h) => h.expiries[0]!.expiresAt > h.grantAt).sort((x, y) => x.grantAt - y.grantAt);
    for (let i = 1; i < held.length; i++) {
      const [before, after] = [held[i - 1]!, held[i]!];
      if (after.fence > before.fence || overlapping.has(after) || overlapping.has(before)) continue;
      // JSON: a fence that is not a number (a reply that belonged to another command) must show as what it is.
      violations.push({ invariant: 'b', key, at: after.grantAt, message: `"${key}" granted to ${after.actor} with fence ${JSON.stringify(after.fence) ?? 'undefined'} after ${before.actor}'s ${JSON.stringify(before.fence) ?? 'undefined'}` });
    }
    const accepted = holds.flatMap((h) => h.writes.filter((w) => w.accepted && !h.rolledBack).map((w) => ({ ...w, fence: h.fence, actor: h.actor })));
    let highest: (typeof accepted)[number] | undefined;
    // In register order: each accepted write reports the value it found, and the value only grows.
    for (const w of accepted.sort((x, y) => x.before - y.before || x.t - y.t)) {
      if (highest && w.fence < highest.fence && w.before > highest.before) {
        violations.push({ invariant: 'b', key, at: w.t, message: `register accepted fence ${w.fence} (${w.actor}) after fence ${highest.fence} (${highest.actor})` });
      }
      if (!highest || w.fence > highest.fence) highest = w;
    }
  }
  return violations;
}

/**
 * (e) Loss is visible: a holder whose key another holder got learnt of its loss by its own deadline (its
 * local expiry, plus slack; a frozen holder by the time it ran again, plus slack), and never ended its
 * section as a success (a release that reported nothing).
 */
export function checkLossSeen(model: Model, bounds: Bounds, found: readonly Overlap[]): Violation[] {
  const violations: Violation[] = [];
  for (const overlap of found) {
    const { older, newer } = overlap;
    if (older.killedAt !== undefined || !mustHaveLost(overlap)) continue;
    const deadline = expiryAt(older, newer.grantAt);
    const resumed = resumedAfter(model.procs.get(older.actor)?.pauses ?? [], deadline, bounds.slackMs);
    const due = Math.max(deadline, resumed ?? 0) + bounds.slackMs;
    if (older.lossAt === undefined) {
      if (older.releasedAt !== undefined && older.releasedAt > newer.grantAt) {
        violations.push({ invariant: 'e', key: older.key, at: newer.grantAt, message: `${older.actor} (fence ${older.fence}) released "${older.key}" as a success although ${newer.actor} was granted it meanwhile (fence ${newer.fence})` });
      }
      continue;
    }
    if (older.lossAt > due) {
      violations.push({
        invariant: 'e',
        key: older.key,
        at: older.lossAt,
        message: `${older.actor} (fence ${older.fence}) learnt its loss of "${older.key}" ${older.lossAt - deadline} ms after its deadline (${newer.actor} held it since ${older.lossAt - newer.grantAt} ms before)`,
      });
    }
  }
  return violations;
}

/**
 * When a process frozen at `at` (or within `slackMs` after it) ran again, or undefined if it was not. A pause
 * that began less than `slackMs` after the previous one ended (two app-pause faults back to back: the second
 * SIGSTOP in the millisecond of the first SIGCONT) is the same freeze: the process had less than its slack to run.
 */
function resumedAfter(pauses: readonly Interval[], at: number, slackMs: number): number | undefined {
  let resumed = pauses.find((p) => p.from <= at + slackMs && p.to >= at)?.to;
  if (resumed === undefined) return undefined;
  for (const p of pauses) if (p.from <= resumed + slackMs && p.to > resumed) resumed = p.to;
  return resumed;
}
