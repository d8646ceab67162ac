import type { Prng } from '../prng';
import type { WorkloadKeys } from './worker-config';

/** The operations the workload mixes; each names the part of the public API it drives. */
export type OpKind =
  | 'with-lock' // withLock with a wait, sometimes a re-entrant join inside
  | 'decorated' // @DistributedLock method that waits (reentrant: true), sometimes re-entered
  | 'decorated-skip' // @DistributedLock waitMs 0, onLocked 'skip': one attempt
  | 'cron' // @DistributedLock waitMs 0 with minHoldMs
  | 'acquire-using' // acquire + await using, sometimes extend()
  | 'try-acquire' // tryAcquire: null when taken
  | 'single-attempt' // acquire waitMs 0: LockNotAcquiredError when taken
  | 'short-wait' // a wait that mostly times out
  | 'aborted-wait' // a wait ended by an AbortSignal
  | 'min-hold' // acquire with minHoldMs, released early
  | 'long-hold' // a section longer than the lease: the watchdog must renew
  | 'multi-hold' // two keys held at once, long enough for batched renewals
  | 'pair' // one process holds a key while another of its calls waits for it
  | 'transaction' // PostgreSQL: withLock inside trackTransaction, released after COMMIT
  | 'read' // mode: 'read' on a read/write key: any number of readers at once, or one writer
  | 'write' // mode: 'write' on a read/write key; its section writes the register (writers exclude each other)
  | 'permits'; // permits: SHARED_PERMITS on a semaphore key

/** The N of every semaphore key of the workload: one N per key, so the checker counts holders against it. */
export const SHARED_PERMITS = 2;

const SHAPED: ReadonlySet<OpKind> = new Set(['read', 'write', 'permits']);

/** The shape a shaped operation asks for (undefined for a plain lock). */
export function shapeOf(kind: string): 'read' | 'write' | 'permits' | undefined {
  return SHAPED.has(kind as OpKind) ? (kind as 'read' | 'write' | 'permits') : undefined;
}

/** Every choice one operation makes, drawn before it starts so that outcomes cannot shift later draws. */
export interface OpPlan {
  readonly kind: OpKind;
  readonly key: string;
  /** Second key of multi-hold. */
  readonly key2: string;
  readonly waitMs: number;
  readonly leaseMs: number;
  readonly holdMs: number;
  readonly writes: number;
  /** Pause between a section's read and its write (the window a second holder would fall into). */
  readonly rmwGapMs: number;
  readonly join: boolean;
  readonly extendMs: number | undefined;
  readonly abortAfterMs: number;
  readonly minHoldMs: number;
  /** Pause before the next operation. */
  readonly thinkMs: number;
}

const SINGLE: ReadonlySet<OpKind> = new Set(['decorated-skip', 'cron', 'try-acquire', 'single-attempt']);

export function isSingleAttempt(kind: OpKind): boolean {
  return SINGLE.has(kind);
}

/**
 * `self` is the process' label: its `pair` operations wait for warm keys of its own (`warm:<label>:<n>`),
 * which nobody else waits for, while every process makes single attempts on anyone's (the first few
 * incarnations of each slot). So when a process dies in the middle of a pair, what it left behind on the
 * key (a lease, a queue) is met by single attempts only, as with a key that only the dead pod's work uses;
 * a waiter of another process would clean it up and hide what a single attempt would have suffered.
 */
export function drawPlan(prng: Prng, mix: Readonly<Partial<Record<OpKind, number>>>, keys: WorkloadKeys, leases: readonly number[], self: string): OpPlan {
  const kind = prng.weighted(mix);
  // All draws happen whatever the kind, in one order: the stream stays aligned across kinds.
  const hotOrCold = prng.chance(0.6) ? prng.pick(keys.hot) : prng.pick(keys.cold);
  const anyKey = prng.weighted({ hot: 2, warm: 1, cold: 1 });
  const warm = `warm:${self}:${prng.int(1, 2)}`;
  const anyWarm = `warm:a${prng.int(0, keys.warmSlots - 1)}.${prng.int(1, 3)}:${prng.int(1, 2)}`;
  const single = anyKey === 'hot' ? prng.pick(keys.hot) : anyKey === 'warm' ? anyWarm : prng.pick(keys.cold);
  const otherHot = prng.pick(keys.hot);
  // A second hot key, never the first: two locks of the hot slot held (and renewed) together on a Cluster.
  const secondHot = keys.hot[(keys.hot.indexOf(otherHot) + prng.int(1, keys.hot.length - 1)) % keys.hot.length]!;
  const bothHot = prng.chance(0.7);
  const leaseMs = prng.pick(leases);
  const holdRoll = prng.next();
  const shortHold = holdRoll < 0.7 ? prng.int(2, 60) : prng.int(60, 400);
  const longFactor = 1.2 + prng.next() * 0.8;
  const waitMs = prng.int(200, 1_500);
  const plan = {
    kind,
    key: hotOrCold,
    key2: otherHot,
    waitMs,
    leaseMs,
    holdMs: shortHold,
    writes: prng.int(1, 3),
    rmwGapMs: prng.int(0, 4),
    join: prng.chance(0.25),
    extendMs: prng.chance(0.3) ? prng.pick(leases) : undefined,
    abortAfterMs: prng.int(30, 400),
    minHoldMs: prng.int(200, 700),
    thinkMs: prng.int(0, 40),
  };
  switch (kind) {
    case 'decorated-skip':
    case 'cron':
    case 'try-acquire':
    case 'single-attempt':
      return { ...plan, key: single, waitMs: 0 };
    case 'short-wait':
      return { ...plan, key: prng.pick(keys.hot), waitMs: prng.int(50, 200) };
    case 'aborted-wait':
      return { ...plan, key: otherHot, waitMs: 3_000 };
    case 'long-hold':
      return { ...plan, holdMs: Math.round(leaseMs * longFactor), writes: 3 };
    case 'multi-hold':
      // Waits long enough to get both keys of a contended pair, and holds them past a renewal or two.
      return {
        ...plan,
        key: otherHot,
        key2: bothHot ? secondHot : prng.pick(keys.cold),
        waitMs: prng.int(2_000, 3_000),
        holdMs: Math.round(leaseMs * (0.7 + longFactor / 2)),
        writes: 2,
      };
    case 'pair':
      return { ...plan, key: warm, holdMs: prng.int(400, 1_500), waitMs: 3_000 };
    case 'read':
    case 'write':
    case 'permits':
      // From the draws above, none of their own (the stream stays aligned with the plain kinds'): one
      // attempt a quarter of the time, a section past the lease (renewals of the hold) three in ten.
      return {
        ...plan,
        key: kind === 'permits' ? keys.semaphores[keys.hot.indexOf(otherHot) % keys.semaphores.length]! : keys.readWrite[keys.hot.indexOf(otherHot) % keys.readWrite.length]!,
        waitMs: plan.join ? 0 : waitMs,
        holdMs: plan.extendMs === undefined ? shortHold : Math.round(leaseMs * longFactor),
      };
    default:
      return plan;
  }
}
