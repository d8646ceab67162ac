import type { TortureCase } from '../cases';
import type { HeldLockSample } from '../history/records';
import { QUEUE_HEARTBEAT_MS, type Bounds } from './bounds';
import type { Interval } from './intervals';
import type { Model, Op } from './model';
import { settledAfter, storeEnd } from './liveness';
import type { Violation } from './violation';
import { failoverWindows, storeDisturbances, storeFaults } from './windows';

/**
 * Until when the store may show `lock` (seen first at `firstSeen`): a lock of a recorded grant until that
 * hold's store end; a lock no grant explains (a reply on its way, a call whose clean-up is due) for one
 * command timeout plus slack after it was first seen or after the store settled from the fault around it;
 * a lock of a process that was frozen or killed until that process ran again, or its lease ran out; a
 * lock of an operation of its holder on that key (a waiter's entry that became the owner before the waiter
 * learnt so, an attempt whose reply is on its way) until one orphan bound after the operation ended and
 * the store answered again: its clean-up is due then.
 */
function allowedUntil(model: Model, bounds: Bounds, faults: readonly Interval[], windows: readonly Interval[], ops: readonly Op[], lock: HeldLockSample, firstSeen: number): number {
  const hold = model.holds.find((h) => h.key === lock.key && h.fence === lock.fence);
  if (hold) return storeEnd(hold, bounds, model.runEnd, windows, faults);
  let until = firstSeen + bounds.orphanMs;
  for (const f of faults) if (f.from <= firstSeen + bounds.slackMs && f.to >= firstSeen - bounds.orphanMs) until = Math.max(until, f.to + bounds.orphanMs);
  for (const op of ops) {
    const end = op.end ?? model.runEnd;
    if (op.start <= firstSeen && end >= firstSeen - bounds.orphanMs) until = Math.max(until, settledAfter(faults, end, bounds) + bounds.orphanMs);
  }
  const proc = model.procs.get(lock.holder);
  for (const p of proc?.pauses ?? []) if (p.from <= until) until = Math.max(until, Math.min(p.to + bounds.orphanMs, p.from + bounds.leaseMaxMs + bounds.slackMs));
  if (proc?.diedAt !== undefined && proc.diedAt <= until) until = Math.max(until, proc.diedAt + bounds.leaseMaxMs + bounds.queueMs + bounds.slackMs);
  for (const c of proc?.closes ?? []) if (c.from <= until && c.to >= firstSeen - bounds.orphanMs) until = Math.max(until, c.to + bounds.orphanMs);
  return until;
}

/**
 * (d) Nothing leaked. A lock the sampler saw (at the sample's start, the earliest moment it can have
 * existed) later than its bound; a fair queue whose every entry was past its heartbeat for longer than the
 * queue bound, outside faults (a stalled store keeps waiters from refreshing their entries); and at the end
 * a lease the run took that was neither released, nor lost visibly, nor its holder killed.
 */
export function checkLeaks(model: Model, def: TortureCase, bounds: Bounds): Violation[] {
  const violations: Violation[] = [];
  const disturbed = storeDisturbances(model, bounds);
  const faults = storeFaults(model);
  const windows = failoverWindows(model, def, bounds);
  const firstSeen = new Map<string, number>();
  const opsOf = new Map<string, Op[]>();
  for (const op of model.ops) {
    for (const key of op.keys) {
      const id = `${op.actor}|${key}`;
      if (!opsOf.has(id)) opsOf.set(id, []);
      opsOf.get(id)!.push(op);
    }
  }
  // A lock's bound depends only on the lock and when it was first seen: worked out once.
  const bound = new Map<string, number>();
  // Per lock, the last sample that still showed it past its bound: one violation, with the worst overshoot.
  const worst = new Map<string, { lock: HeldLockSample; at: number; over: number }>();
  const reported = new Set<string>();
  for (const sample of model.samples) {
    for (const lock of sample.locks) {
      const id = `${lock.key}#${lock.fence}`;
      if (!firstSeen.has(id)) firstSeen.set(id, sample.start);
      if (!bound.has(id)) bound.set(id, allowedUntil(model, bounds, faults, windows, opsOf.get(`${lock.holder}|${lock.key}`) ?? [], lock, firstSeen.get(id)!));
      const until = bound.get(id)!;
      if (sample.start > until) worst.set(id, { lock, at: worst.get(id)?.at ?? sample.start, over: sample.start - until });
    }
    for (const queue of sample.queues) {
      const line = queue.shaped ? 'line of shaped waiters' : 'fair queue';
      if (queue.entries.length === 0 || reported.has(`${line}:${queue.key}`)) continue;
      const deadSince = Math.max(...queue.entries.map((e) => e.deadline));
      const quiet = !disturbed.some((d) => d.from <= sample.start && d.to >= deadSince - QUEUE_HEARTBEAT_MS);
      if (!quiet || sample.start - deadSince <= bounds.queueMs) continue;
      reported.add(`${line}:${queue.key}`);
      violations.push({
        invariant: 'd',
        key: queue.key,
        at: sample.start,
        message: `${line} of "${queue.key}" still holds ${queue.entries.length} entr${queue.entries.length === 1 ? 'y' : 'ies'} (${[...new Set(queue.entries.map((e) => e.holder))].join(', ')}) all dead for ${Math.round(sample.start - deadSince)} ms`,
      });
    }
  }
  for (const { lock, at, over } of worst.values()) {
    const hold = model.holds.find((h) => h.key === lock.key && h.fence === lock.fence);
    const whose = hold ? `the grant of ${hold.actor} (${hold.lossReason ? `lost: ${hold.lossReason}` : hold.releasedAt ? 'released' : 'ended'})` : `no recorded grant (holder ${lock.holder})`;
    violations.push({ invariant: 'd', key: lock.key, at, message: `"${lock.key}" still held in the store with fence ${lock.fence} up to ${Math.round(over)} ms past its bound: ${whose}` });
  }
  for (const h of model.holds) {
    if (h.releasedAt !== undefined || h.lossAt !== undefined || h.killedAt !== undefined || h.releaseFailedAt !== undefined) continue;
    violations.push({ invariant: 'd', key: h.key, at: h.grantAt, message: `${h.actor}'s lease of "${h.key}" (fence ${h.fence}) was never released nor reported lost` });
  }
  return violations;
}
