import type { TortureCase } from '../cases';
import { DATA_LOSING_FAULTS } from '../faults/fault-kinds';
import type { Bounds } from './bounds';
import { union, type Interval } from './intervals';
import type { Fault, Model } from './model';

const APP_FAULTS = new Set(['app-pause', 'app-kill', 'app-close']);

/**
 * When the store (or one application's way to it) was disturbed: from a server or network fault's start
 * until it recovered plus the settling time. Liveness and polling are not judged inside these stretches;
 * what the fault left behind (a grant whose reply came late) is judged from their end.
 */
export function storeDisturbances(model: Model, bounds: Bounds): Interval[] {
  return union(model.faults.filter((f) => !APP_FAULTS.has(f.kind)).map((f) => ({ from: f.start, to: f.recovered + bounds.recoveryMs })));
}

/**
 * Server and network faults from start to recovery, without settling time: a call whose reply was held
 * up gets it, and must clean up after it, from the moment the store answers again.
 */
export function storeFaults(model: Model): Interval[] {
  return union(model.faults.filter((f) => !APP_FAULTS.has(f.kind)).map((f) => ({ from: f.start, to: f.recovered })));
}

/** Every fault, the applications' included, with the settling time after it. */
export function anyFault(model: Model, bounds: Bounds): Interval[] {
  return union(model.faults.map((f) => ({ from: f.start, to: f.recovered + bounds.recoveryMs })));
}

/** Whether a fault can have lost grants on this topology (see `ExclusionPromise`). */
export function losesData(fault: Fault, def: TortureCase): boolean {
  if (def.exclusion !== 'fencing') return false;
  return DATA_LOSING_FAULTS.has(fault.kind) || /failed over/.test(fault.detail ?? '');
}

/**
 * The failover windows of the case: from a data-losing fault's start until every lease granted before
 * it has had the time to learn it is gone (its next renewal, at the latest one lease after recovery).
 * Inside, two holders of one key are allowed only if the fenced register refused the older one's writes.
 */
export function failoverWindows(model: Model, def: TortureCase, bounds: Bounds): Interval[] {
  return union(model.faults.filter((f) => losesData(f, def)).map((f) => ({ from: f.start, to: f.recovered + bounds.leaseMaxMs + bounds.slackMs })));
}

/** The faults overlapping `span`, by kind: the cause of a stall, or of a violation nearby. */
export function faultsDuring(model: Model, span: Interval): Fault[] {
  return model.faults.filter((f) => f.start <= span.to && span.from <= f.recovered);
}
