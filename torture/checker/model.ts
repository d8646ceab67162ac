import type { HeldLockSample, HistoryRecord, OpOutcome, QueueSample } from '../history/records';
import type { Interval } from './intervals';

/** One grant from the moment its holder learnt of it until it ended, with everything written under it. */
export interface Hold {
  readonly actor: string;
  readonly op: string;
  readonly key: string;
  readonly fence: number;
  readonly digest: string;
  readonly grantAt: number;
  leaseMs: number;
  readonly minHoldMs: number;
  /** A read/write lock's or a semaphore's hold, and a permit's N; undefined for a plain lock. */
  readonly shape?: 'read' | 'write' | 'permits';
  readonly permits?: number;
  sectionEndAt?: number;
  rolledBack?: boolean;
  /** When the holder learnt of the loss (lost event, or LeaseLostError from the call), and why. */
  lossAt?: number;
  lossReason?: string;
  releasedAt?: number;
  keptMs?: number;
  releaseFailedAt?: number;
  killedAt?: number;
  /** Its process died after the release, while the key was kept for the minimum hold (`keptMs`). */
  diedWhileKeptAt?: number;
  /** When the operation that took it ended (its section cannot outlive it). */
  opEndAt?: number;
  /** Local expiry as the holder knew it over time: grant, each renewal, each extend. */
  readonly expiries: Array<{ t: number; expiresAt: number }>;
  readonly writes: Array<{ t: number; accepted: boolean; read: number; before: number; stored?: number }>;
}

export interface Op {
  readonly actor: string;
  readonly op: string;
  readonly kind: string;
  readonly key: string;
  /** Every key the operation may take: `key`, and a multi-hold's second one. */
  readonly keys: readonly string[];
  readonly waitMs: number;
  readonly leaseMs: number;
  readonly single: boolean;
  readonly start: number;
  end?: number;
  outcome?: OpOutcome;
  error?: string;
  option?: string;
}

export interface Proc {
  readonly label: string;
  readonly slot: number;
  pid?: number;
  spawned: number;
  /** The harness' SIGKILL of a live process (the app-kill fault). */
  killedAt?: number;
  /**
   * When the process stopped running without being asked: killed by the harness, or crashed on its own
   * (a signal or a non-zero exit before any stop was asked; (f) reports the crash). Its holds end then.
   */
  diedAt?: number;
  exitedAt?: number;
  code?: number | null;
  signal?: string | null;
  stuck?: number;
  stopAsked?: number;
  exitingAt?: number;
  /** The module's `LockConfigError` when it refused the deployment at startup. */
  refused?: string;
  readonly pauses: Interval[];
  readonly closes: Array<Interval & { ms: number }>;
  /** When the application said it was ready: after its start, and after each reopen. */
  readonly readies: number[];
}

export interface Fault {
  readonly kind: string;
  readonly target: string;
  readonly start: number;
  readonly end: number;
  readonly recovered: number;
  readonly detail?: string;
}

export interface Sample {
  readonly start: number;
  readonly end: number;
  readonly locks: readonly HeldLockSample[];
  readonly queues: readonly QueueSample[];
}

/** The wait-related events, with their wake-ups: rule (h) reads these. */
export interface WaitEvent {
  readonly actor: string;
  readonly t: number;
  readonly ev: string;
  readonly key: string;
  readonly waitedMs: number;
  readonly attempts: number;
  readonly wakeUps: { notification: number; backoff: number; expiry: number; deadline: number };
}

export interface Model {
  readonly holds: Hold[];
  readonly ops: Op[];
  readonly procs: Map<string, Proc>;
  readonly faults: Fault[];
  readonly samples: Sample[];
  readonly waits: WaitEvent[];
  readonly unhandled: Array<{ actor: string; t: number; error: string }>;
  /** When the workload began (all applications up): violation times are printed from here. */
  runStart: number;
  runEnd: number;
  workloadEnd: number;
}

/** Builds holds, operations, processes, faults and samples from the merged history. */
export function buildModel(records: readonly HistoryRecord[]): Model {
  const holds: Hold[] = [];
  const byDigest = new Map<string, Hold>();
  const ops = new Map<string, Op>();
  const procs = new Map<string, Proc>();
  const model: Model = { holds, ops: [], procs, faults: [], samples: [], waits: [], unhandled: [], runStart: records[0]?.t ?? 0, runEnd: 0, workloadEnd: Infinity };
  const hold = (actor: string, digest: unknown): Hold | undefined => byDigest.get(`${actor}/${String(digest)}`);
  const paused = new Map<string, number>();
  for (const r of records) {
    model.runEnd = Math.max(model.runEnd, r.t);
    switch (r.type) {
      case 'grant': {
        const h: Hold = {
          actor: r.p,
          op: r.op,
          key: r.key,
          fence: r.fence,
          digest: r.digest,
          grantAt: r.t,
          leaseMs: r.leaseMs,
          minHoldMs: r.minHoldMs,
          ...(r.shape ? { shape: r.shape, permits: r.permits } : {}),
          expiries: [{ t: r.t, expiresAt: r.expiresAt }],
          writes: [],
        };
        holds.push(h);
        byDigest.set(`${r.p}/${r.digest}`, h);
        break;
      }
      case 'write': {
        const h = lastWhere(holds, (candidate) => candidate.actor === r.p && candidate.key === r.key && candidate.fence === r.fence);
        h?.writes.push({ t: r.t, accepted: r.accepted, read: r.read, before: r.before, ...(r.stored === undefined ? {} : { stored: r.stored }) });
        break;
      }
      case 'section-end': {
        const h = hold(r.p, r.digest);
        if (h && h.sectionEndAt === undefined) h.sectionEndAt = r.t;
        if (h && (r as { rolledBack?: boolean }).rolledBack) h.rolledBack = true;
        break;
      }
      case 'extend': {
        const h = hold(r.p, r.digest);
        if (h && r.ok) {
          h.leaseMs = r.ms;
          h.expiries.push({ t: r.t, expiresAt: r.expiresAt });
        }
        break;
      }
      case 'ev': {
        const h = hold(r.p, r.digest);
        if (r.ev === 'renewed' && h) h.expiries.push({ t: r.t, expiresAt: Number(r.expiresAt) });
        if (r.ev === 'lost' && h && h.lossAt === undefined) {
          h.lossAt = r.t;
          h.lossReason = String(r.reason);
        }
        if (r.ev === 'released' && h) {
          h.releasedAt = r.t;
          h.keptMs = Number(r.keptMs);
        }
        if (r.ev === 'release-failed' && h) h.releaseFailedAt = r.t;
        if ((r.ev === 'acquired' || r.ev === 'not-acquired') && r.wakeUps) {
          model.waits.push({ actor: r.p, t: r.t, ev: r.ev, key: r.key, waitedMs: Number(r.waitedMs), attempts: Number(r.attempts), wakeUps: r.wakeUps as WaitEvent['wakeUps'] });
        }
        break;
      }
      case 'op-start':
        ops.set(r.op, { actor: r.p, op: r.op, kind: r.kind, key: r.key, keys: r.key2 ? [r.key, r.key2] : [r.key], waitMs: r.waitMs, leaseMs: r.leaseMs, single: r.single, start: r.t });
        break;
      case 'op-end': {
        const op = ops.get(r.op);
        if (!op) break;
        Object.assign(op, { end: r.t, outcome: r.outcome, error: r.error, option: r.option });
        for (const h of holds) if (h.op === r.op && h.actor === r.p) h.opEndAt ??= r.t;
        if (r.outcome === 'lost') {
          // The call's LeaseLostError is the loss made visible, for every hold the operation took.
          for (const h of holds) if (h.op === r.op && h.lossAt === undefined && h.releasedAt === undefined) Object.assign(h, { lossAt: r.t, lossReason: r.error });
        }
        break;
      }
      case 'unhandled':
        model.unhandled.push({ actor: r.p, t: r.t, error: r.error });
        break;
      case 'proc': {
        const proc = procs.get(r.p);
        if (proc && r.what === 'closed') proc.closes.push({ from: r.t - (r.ms ?? 0), to: r.t, ms: r.ms ?? 0 });
        if (proc && r.what === 'exiting') proc.exitingAt = r.t;
        if (proc && r.what === 'refused') proc.refused = r.error;
        if (proc && (r.what === 'ready' || r.what === 'reopened')) proc.readies.push(r.t);
        break;
      }
      case 'fault':
        model.faults.push({ kind: r.kind, target: r.target, start: r.start, end: r.end, recovered: r.recovered, ...(r.detail ? { detail: r.detail } : {}) });
        break;
      case 'sample':
        if (!r.error && r.locks) model.samples.push({ start: r.start, end: r.end, locks: r.locks, queues: r.queues ?? [] });
        break;
      case 'run':
        if (r.what === 'workload-end') model.workloadEnd = r.t;
        if (r.what === 'workload-start') model.runStart = r.t;
        break;
      case 'app': {
        let proc = procs.get(r.label);
        if (!proc) procs.set(r.label, (proc = { label: r.label, slot: r.slot, spawned: r.t, pauses: [], closes: [], readies: [] }));
        if (r.pid) proc.pid = r.pid;
        if (r.what === 'sigstop') paused.set(r.label, r.t);
        if (r.what === 'sigcont') proc.pauses.push({ from: paused.get(r.label) ?? r.t, to: r.t });
        // A SIGKILL sent to a process that had exited already (it crashed first) kills nothing.
        if (r.what === 'sigkill' && proc.exitedAt === undefined) proc.killedAt ??= r.t;
        if (r.what === 'stop-asked') proc.stopAsked = r.t;
        if (r.what === 'stuck') proc.stuck = r.t;
        if (r.what === 'exited') Object.assign(proc, { exitedAt: r.t, code: r.code, signal: r.signal });
        break;
      }
    }
  }
  for (const proc of procs.values()) {
    const crashed = proc.exitedAt !== undefined && proc.stopAsked === undefined && (proc.code !== 0 || !!proc.signal);
    proc.diedAt = proc.killedAt ?? (crashed ? proc.exitedAt : undefined);
  }
  for (const h of holds) {
    const diedAt = procs.get(h.actor)?.diedAt;
    if (diedAt !== undefined && diedAt >= h.grantAt && h.releasedAt === undefined && h.lossAt === undefined) h.killedAt = diedAt;
    if (diedAt !== undefined && h.releasedAt !== undefined && diedAt >= h.releasedAt && diedAt < h.releasedAt + (h.keptMs ?? 0)) h.diedWhileKeptAt = diedAt;
  }
  model.ops.push(...ops.values());
  return model;
}

/** Until when a holder believed it held the key: its section's end, the loss it learnt, or its death. */
export function believedEnd(h: Hold, runEnd: number): number {
  const ends = [h.sectionEndAt, h.lossAt, h.killedAt, h.releasedAt, h.releaseFailedAt, h.opEndAt];
  return Math.min(runEnd, ...ends.map((t) => t ?? Infinity));
}

/** The holder's local expiry as last known at `t`. */
export function expiryAt(h: Hold, t: number): number {
  let expiresAt = h.expiries[0]!.expiresAt;
  for (const e of h.expiries) if (e.t <= t) expiresAt = Math.max(expiresAt, e.expiresAt);
  return expiresAt;
}

function lastWhere<T>(items: readonly T[], predicate: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i]!)) return items[i];
  return undefined;
}
