import type { TortureCase } from '../cases';
import type { Bounds } from './bounds';
import { longestGap, meets, union, type Interval } from './intervals';
import type { Hold, Model, Op } from './model';
import type { Violation } from './violation';
import { failoverWindows, storeDisturbances, storeFaults } from './windows';

/**
 * Until when the store may legitimately keep `h`'s lock after its holder let go of it: a release goes out
 * after the section and keeps the key `keptMs` more (minHoldMs); a loss learnt by the deadline may leave the
 * key until its TTL (a rejected one means it is already gone); a killed holder's key lives out its lease,
 * and on a fair queue a dead waiter of its can be handed the key for one more heartbeat.
 */
export function storeEnd(h: Hold, bounds: Bounds, runEnd: number, windows: readonly Interval[] = [], faults: readonly Interval[] = []): number {
  let end = storeEndOutsideFailovers(h, bounds, runEnd) + bounds.ttlRoundingMs;
  if (bounds.ttlRefreshedByFaults) {
    for (const f of faults) if (f.from <= end && f.to >= end - bounds.leaseMaxMs) end = Math.max(end, f.to + bounds.leaseMaxMs + bounds.ttlRoundingMs + bounds.slackMs);
  }
  // A release (or the renewal that found the key gone) inside a failover window may have gone to the
  // demoted primary: the key then lives out its TTL on the new one.
  const released = Math.min(h.releasedAt ?? Infinity, h.lossAt ?? Infinity, h.releaseFailedAt ?? Infinity);
  if (released !== Infinity && meets(windows, { from: released, to: released })) return Math.max(end, released + bounds.leaseMaxMs + bounds.slackMs);
  return end;
}

function storeEndOutsideFailovers(h: Hold, bounds: Bounds, runEnd: number): number {
  const { slackMs, leaseMaxMs } = bounds;
  if (h.killedAt !== undefined) return h.killedAt + h.leaseMs + slackMs + bounds.queueMs;
  if (h.releasedAt !== undefined) {
    // A holder that died while its key was kept for the minimum hold never ended the hold: the store lets
    // the key go when its lease runs out (on ZooKeeper, the session; on Redis the kept TTL is the hold).
    const died = h.diedWhileKeptAt !== undefined ? h.diedWhileKeptAt + h.leaseMs : 0;
    return Math.max(h.releasedAt + (h.keptMs ?? 0), died) + slackMs;
  }
  if (h.lossAt !== undefined) return h.lossAt + (h.lossReason === 'rejected' ? slackMs : Math.max(h.leaseMs, leaseMaxMs) + slackMs);
  if (h.releaseFailedAt !== undefined) return h.releaseFailedAt + h.leaseMs + slackMs;
  if (h.sectionEndAt !== undefined) return h.sectionEndAt + h.minHoldMs + bounds.orphanMs;
  return runEnd;
}

/** The last fault that was still unrecovered at or shortly before `t`: a late reply arrives once it lifts. */
export function settledAfter(disturbed: readonly Interval[], t: number, bounds: Bounds): number {
  let end = t;
  for (const d of disturbed) if (d.from <= t + bounds.slackMs && d.to >= t - bounds.orphanMs) end = Math.max(end, d.to);
  return end;
}

/**
 * When each key may be taken by someone, so that a refusal or a long wait is explained: every hold from a
 * little before its grant was recorded until its store end; every acquisition whose outcome the store may
 * have seen differently (a store error, an abort, a shutdown) until its clean-up had the time to run; every
 * operation of a process frozen or killed in the middle of it; and every fault until it settled.
 */
export function busyByKey(model: Model, def: TortureCase, bounds: Bounds): Map<string, Interval[]> {
  const disturbed = storeDisturbances(model, bounds);
  const faults = storeFaults(model);
  const windows = failoverWindows(model, def, bounds);
  const raw = new Map<string, Interval[]>();
  const add = (key: string, from: number, to: number): void => void raw.set(key, [...(raw.get(key) ?? []), { from, to }]);
  for (const h of model.holds) add(h.key, h.grantAt - bounds.orphanMs, storeEnd(h, bounds, model.runEnd, windows, faults));
  for (const op of model.ops) {
    const end = op.end ?? model.runEnd;
    // On a fair queue such a call may also leave its entry behind (its leave failed or never went out):
    // a dead entry, which stands its heartbeat and may then be handed the key for one more (queueMs).
    const proc = model.procs.get(op.actor);
    for (const key of op.keys) {
      if (op.outcome && op.outcome !== 'ok' && op.outcome !== 'refused') add(key, op.start, settledAfter(faults, end, bounds) + Math.max(bounds.orphanMs, bounds.queueMs));
      for (const p of proc?.pauses ?? []) if (p.from <= end && op.start <= p.to) add(key, op.start, Math.max(end, p.to) + bounds.orphanMs);
      if (proc?.diedAt !== undefined && proc.diedAt <= end && op.start <= proc.diedAt) {
        add(key, op.start, proc.diedAt + bounds.leaseMaxMs + bounds.queueMs + bounds.slackMs);
      }
    }
  }
  const merged = new Map<string, Interval[]>();
  for (const [key, intervals] of raw) merged.set(key, union([...intervals, ...disturbed]));
  return merged;
}

/**
 * (c) Liveness. A single attempt (tryAcquire, waitMs 0, onLocked 'skip') refused while no hold, no
 * unsettled call and no fault could explain the key being taken is a free key refused. A wait that timed
 * out while the key stood free for longer than a wake-up takes (the backoff's cap plus slack) was never
 * given it. On a read/write or semaphore key any hold counts as taking it, and so does another operation
 * waiting for it (`waiters`, see shapes.ts): what is judged there is a key nobody holds nor waits for
 * refused, as a dead line of shaped waiters would.
 */
export function checkLiveness(model: Model, bounds: Bounds, busy: Map<string, Interval[]>, waiters = new Map<string, Array<{ op: string; span: Interval }>>()): Violation[] {
  const violations: Violation[] = [];
  const disturbed = storeDisturbances(model, bounds);
  const refusals = model.ops.filter((op): op is Op & { end: number } => op.outcome === 'refused' && op.end !== undefined);
  for (const op of refusals) {
    const span = { from: op.start, to: op.end };
    // A multi-hold is refused while either of its keys stays taken; a shaped key also while others wait for it.
    const inLine = (waiters.get(op.key) ?? []).filter((w) => w.op !== op.op).map((w) => w.span);
    const taken =
      op.keys.length === 1 && inLine.length === 0 ? (busy.get(op.key) ?? disturbed) : union([...op.keys.flatMap((key) => busy.get(key) ?? disturbed), ...inLine]);
    if (op.single) {
      if (meets(taken, span)) continue;
      violations.push({ invariant: 'c', key: op.key, at: op.start, message: `${op.actor} refused "${op.key}" on a single attempt (${op.kind}) while nobody held it: ${sinceLast(model, op, bounds)}` });
      continue;
    }
    const gap = longestGap(taken, span);
    if (gap && gap.to - gap.from > bounds.wakeMs) {
      violations.push({
        invariant: 'c',
        key: op.key,
        at: gap.from,
        message: `${op.actor} waited ${op.end - op.start} ms for "${op.key}" (${op.kind}) and was refused although the key stood free for ${gap.to - gap.from} ms of it`,
      });
    }
  }
  return violations;
}

/** "free since …": what the key's last holder did, for the violation line. */
function sinceLast(model: Model, op: Op, bounds: Bounds): string {
  const before = model.holds.filter((h) => h.key === op.key && h.grantAt < op.start).sort((x, y) => y.grantAt - x.grantAt)[0];
  if (!before) return 'no grant of the key before it';
  const end = storeEndOutsideFailovers(before, bounds, model.runEnd);
  const how = before.killedAt !== undefined ? `killed` : before.releasedAt !== undefined ? 'released' : before.lossAt !== undefined ? `lost (${before.lossReason})` : 'ended';
  return `last holder ${before.actor} (fence ${before.fence}) ${how}, its bound over ${Math.round(op.start - end)} ms before`;
}
