import { LeaseAcquirer, type AcquisitionKind, type LeaseAcquirerContext } from '../acquisition/lease-acquirer.js';
import { LocalFifo } from '../acquisition/local-fifo.js';
import { offersShapes, ShapedLockStore, type SharedLockStore } from '../acquisition/shaped-lock-store.js';
import { eventsOfShape } from '../events/shaped-lock-events.js';
import { LockConfigError } from '../errors/lock-config.error.js';
import { LockReentryError } from '../errors/lock-reentry.error.js';
import { LockUpgradeError } from '../errors/lock-upgrade.error.js';
import type { Lease } from '../lease/lease.js';
import type { AcquireOptions } from '../options/acquire-options.interface.js';
import { lockShapeOption } from '../options/lock-shape.option.js';
import { lockShapeName, type LockShape, type LockShapeName } from '../stores/lock-shape.js';
import type { LockStore } from '../stores/lock-store.interface.js';

/**
 * The read/write and semaphore leases of one LockService. Each shape gets its own LeaseAcquirer over a
 * view of the store that grants in that shape (see ShapedLockStore): validation, shutdown, events, the
 * wait and the watchdog are the single-key ones, and plain acquisitions never pass through here.
 */
export class ShapedLeases {
  private readonly acquirers = new Map<string, LeaseAcquirer>();
  /** The shape of each lease granted here; a lease not in it is a plain one. */
  private readonly shapes = new WeakMap<Lease, LockShapeName>();

  constructor(
    private readonly context: LeaseAcquirerContext,
    /** Throws when the caller's own chain or transaction holds `key` (see `reentryRefusal`). */
    private readonly assertNotHeldHere: (key: string, shape: LockShape) => void,
  ) {}

  /** Like `LeaseAcquirer.acquire`, in the shape `options` ask for (`mode` or `permits`). */
  async acquire(key: string, options: AcquireOptions, waitMs: number, kind: AcquisitionKind): Promise<Lease | null> {
    const shape = lockShapeOption(options)!;
    const lease = await this.acquirerFor(shape, waitMs === 0).acquire(key, options, waitMs, kind);
    if (lease) this.shapes.set(lease, lockShapeName(shape));
    return lease;
  }

  /** 'read', 'write' or 'permits' for a lease granted here; undefined for a plain one. */
  shapeOf(lease: Lease): LockShapeName | undefined {
    return this.shapes.get(lease);
  }

  /**
   * `LockConfigError` naming the shape and the store when the store cannot grant it (checked when a
   * locked method is bound at startup, and by every call asking for a shape).
   */
  assertOffered(shape: LockShape, where: string): SharedLockStore {
    const { store } = this.context;
    if (offersShapes(store)) return store;
    const name = lockShapeName(shape);
    throw new LockConfigError(
      `${shape.permits === undefined ? 'mode' : 'permits'} of ${where}`,
      shape.permits ?? shape.mode,
      `a store that offers ${name === 'permits' ? 'semaphores' : 'read/write locks'} (Redis, PostgreSQL, etcd, ZooKeeper, memory); ` +
        `${store.constructor.name} does not offer ${name === 'permits' ? 'permits' : `mode: '${name}'`}`,
    );
  }

  /**
   * One acquirer per shape, and two for writers: a single attempt (`once`) must not keep readers out, a
   * waiting writer keeps them out for as long as it goes on asking (see `waitingWriterMs`).
   */
  private acquirerFor(shape: LockShape, once: boolean): LeaseAcquirer {
    const label = shape.permits !== undefined ? `permits:${shape.permits}` : shape.mode === 'write' && once ? 'write:once' : shape.mode;
    let acquirer = this.acquirers.get(label);
    if (acquirer) return acquirer;
    const store = this.assertOffered(shape, 'the call');
    const asked: LockShape = shape.mode === 'write' ? { mode: 'write', waitingMs: once ? 0 : waitingWriterMs(this.context.options) } : shape;
    const view = new ShapedLockStore(store, asked);
    const events = eventsOfShape(this.context.events, lockShapeName(shape), shape.permits);
    const waiting = { ...this.context.waiting, store: view, events, waiters: new LocalFifo() };
    const host = { ...this.context.host, events };
    acquirer = new LeaseAcquirer({ ...this.context, store: view, events, waiting, host, assertNotHeldHere: (key) => this.assertNotHeldHere(key, shape) });
    this.acquirers.set(label, acquirer);
    return acquirer;
  }
}

/**
 * How long a waiting writer keeps new readers out after each of its attempts: a waiter asks again at least
 * once per `retryMaxDelayMs` (on a release notification, its holder's expiry, or the safety net), so two of
 * those plus a slow round trip cover its next attempt; a writer that died or gave up stops keeping readers
 * out within that bound, not after a whole lease.
 */
function waitingWriterMs(options: LeaseAcquirerContext['options']): number {
  return 2 * options.retryMaxDelayMs + options.commandTimeoutMs;
}

/**
 * Why a call chain holding `key` as `held` (undefined: a plain lock) may not lock it again as `asked`
 * (undefined: plain), or undefined when it may join the held lease (with `reentrant`):
 * - a read inside a read, a write or a plain lock joins it (the exclusive lease covers reading);
 * - a write or a plain lock inside a read is an upgrade: `LockUpgradeError`, never a wait for itself;
 * - permits join permits; permits and the other shapes never mix (`LockReentryError`).
 */
export function reentryRefusal(key: string, held: LockShapeName | undefined, asked: LockShape | undefined): Error | undefined {
  const wanted = asked && lockShapeName(asked);
  if (held === 'permits' || wanted === 'permits') return held === wanted ? undefined : new LockReentryError(key);
  if (held === 'read' && wanted !== 'read') return new LockUpgradeError(key, wanted === 'write' ? 'write' : 'exclusive');
  return undefined;
}
