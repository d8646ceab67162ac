import type { TortureCase } from '../cases';
import { REFUSED_EXIT_CODE } from '../history/records';
import type { Bounds } from './bounds';
import { meets } from './intervals';
import type { Model } from './model';
import type { Violation } from './violation';
import { anyFault } from './windows';

/** How long a process may take to exit once its application closed: nothing should keep it alive. */
export const EXIT_BOUND_MS = 5_000;

/**
 * (f) Processes. No unhandled rejection or uncaught exception in any application; no error the workload
 * did not expect; every application process that was asked to stop exited on its own, with code 0, soon
 * after its application closed; and an `app.close()` outside faults finished within the shutdown grace
 * plus two command timeouts.
 */
export function checkProcesses(model: Model, bounds: Bounds): Violation[] {
  const violations: Violation[] = [];
  for (const u of model.unhandled) violations.push({ invariant: 'f', at: u.t, message: `${u.actor}: unhandled ${u.error}` });
  for (const op of model.ops) {
    if (op.outcome === 'unexpected') violations.push({ invariant: 'f', key: op.key, at: op.end ?? op.start, message: `${op.actor} ${op.kind} on "${op.key}" failed unexpectedly: ${op.error}` });
  }
  const faults = anyFault(model, bounds);
  for (const proc of model.procs.values()) {
    if (proc.stuck !== undefined) {
      const after = proc.exitingAt === undefined ? 'did not finish closing' : `did not exit ${proc.stuck - proc.exitingAt} ms after app.close()`;
      violations.push({ invariant: 'f', at: proc.stuck, message: `${proc.label} ${after} (killed)` });
    } else if (proc.exitedAt !== undefined && proc.killedAt === undefined && proc.refused === undefined && (proc.code !== 0 || proc.signal)) {
      violations.push({ invariant: 'f', at: proc.exitedAt, message: `${proc.label} exited with code ${proc.code} signal ${proc.signal}` });
    }
    for (const close of proc.closes) {
      if (close.ms > 1_000 + 2 * bounds.commandTimeoutMs + bounds.slackMs && !meets(faults, close)) {
        violations.push({ invariant: 'f', at: close.to, message: `${proc.label}: app.close() took ${close.ms} ms with no fault around` });
      }
    }
  }
  return violations;
}

/**
 * (f) Startup: a case whose deployment the library must refuse (`refusedAtStartup`) has every application
 * refused with a matching `LockConfigError` and none started; any other case has none refused.
 */
export function checkStartup(model: Model, def: TortureCase): Violation[] {
  const violations: Violation[] = [];
  const expected = def.refusedAtStartup;
  for (const proc of model.procs.values()) {
    const at = proc.exitedAt ?? proc.spawned;
    if (proc.refused !== undefined && (!expected || !expected.test(proc.refused))) {
      violations.push({ invariant: 'f', at, message: `${proc.label} was refused at startup: ${proc.refused}` });
    } else if (proc.refused !== undefined && proc.exitedAt !== undefined && (proc.code !== REFUSED_EXIT_CODE || proc.signal)) {
      violations.push({ invariant: 'f', at, message: `${proc.label} was refused at startup, then exited with code ${proc.code} signal ${proc.signal}` });
    } else if (expected && proc.refused === undefined) {
      const what = proc.readies.length > 0 ? 'started' : `exited with code ${proc.code} signal ${proc.signal}`;
      violations.push({ invariant: 'f', at, message: `${proc.label} ${what}, where its options must be refused at startup (${expected})` });
    }
  }
  if (expected && model.procs.size === 0) violations.push({ invariant: 'f', at: model.runStart, message: 'no application was started' });
  return violations;
}

/**
 * (g) Same input, same answer: one process both accepted and refused (LockConfigError) a call with the same
 * value of the option named in the error. A call counts as accepted when the store granted it a lease of
 * that length (a hold of the same operation): a call that never reached a grant (a re-entrant join runs
 * under the lease it joins, a store failure or a taken key may end it before the store judged the length)
 * says nothing of whether the value is accepted.
 */
export function checkSameAnswer(model: Model): Violation[] {
  const violations: Violation[] = [];
  const seen = new Map<string, { accepted?: number; refused?: number }>();
  // The length each grant was asked for, as its grant reports it (a locked method's own leaseMs may differ
  // from what the workload drew for the operation).
  const granted = new Map(model.holds.map((hold) => [`${hold.actor}/${hold.op}`, hold.leaseMs] as const));
  for (const op of [...model.ops].sort((x, y) => (x.end ?? 0) - (y.end ?? 0))) {
    if (!op.outcome || op.outcome === 'unexpected' || op.outcome === 'shutdown') continue;
    const grantedMs = granted.get(`${op.actor}/${op.op}`);
    if (op.outcome !== 'config' && grantedMs === undefined) continue;
    const option = op.outcome === 'config' ? (op.option ?? 'leaseMs') : 'leaseMs';
    const value = option === 'waitMs' ? op.waitMs : (grantedMs ?? op.leaseMs);
    const id = `${op.actor}/${option}=${value}`;
    const entry = seen.get(id) ?? {};
    seen.set(id, entry);
    if (op.outcome === 'config') {
      entry.refused ??= op.end;
      if (entry.accepted !== undefined) {
        violations.push({ invariant: 'g', key: op.key, at: op.end!, message: `${op.actor} refused ${option}=${value} (LockConfigError) after accepting it ${op.end! - entry.accepted} ms before` });
        entry.accepted = undefined;
      }
    } else {
      entry.accepted ??= op.end;
      if (entry.refused !== undefined) {
        violations.push({ invariant: 'g', key: op.key, at: op.end!, message: `${op.actor} accepted ${option}=${value} after refusing it (LockConfigError) ${op.end! - entry.refused} ms before` });
        entry.refused = undefined;
      }
    }
  }
  return violations;
}
