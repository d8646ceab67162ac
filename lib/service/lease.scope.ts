import { LeaseLostError } from '../errors/lease-lost.error.js';
import { LockReentryError } from '../errors/lock-reentry.error.js';
import type { LeaseContext } from '../lease/lease-context.js';
import type { Lease } from '../lease/lease.js';
import type { AcquireOptions } from '../options/acquire-options.interface.js';
import { asksForShape, lockShapeOption } from '../options/lock-shape.option.js';
import type { LockShapeName } from '../stores/lock-shape.js';
import { reentryRefusal } from './shaped-leases.js';
import type { LeaseDeferral } from '../transactions/lease-deferral.js';
import type { TransactionOwnedLeases } from '../transactions/transaction-owned-leases.js';

/** What a single-key scope runs with: the LockService's context, release after commit, and its acquisition. */
export interface LeaseScopeHost {
  readonly context: LeaseContext;
  readonly deferral: LeaseDeferral;
  readonly owned: TransactionOwnedLeases;
  isTransactionActive(): boolean;
  /** The acquisition of a scope (the caller looked for the key in its chain already). */
  acquireForScope(key: string, options: AcquireOptions): Promise<Lease>;
  /** 'read', 'write' or 'permits' for a read/write or semaphore lease; undefined for a plain one. */
  shapeOf(lease: Lease): LockShapeName | undefined;
}

/**
 * The single-key scopes of one LockService (`withLock`, `@DistributedLock({ key })`): re-entry, the
 * transaction that owns a key, and the run under the lease that always ends in its release.
 */
export class LeaseScopes {
  constructor(private readonly host: LeaseScopeHost) {}

  /**
   * Runs `fn` under the lock on `key` and always releases (see `LockService.withLock`). Inside a transaction
   * that already holds a deferred lease on `key`, `fn` runs under that lease: the transaction owns the key.
   * Whatever it refuses before the scope starts (re-entry) rejects the call; it never throws synchronously.
   */
  run<T>(key: string, options: AcquireOptions, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    try {
      const { context } = this.host;
      const holder = context.holding(key);
      if (holder) {
        this.assertJoinable(key, holder.lease, options);
        if (!options.reentrant) throw new LockReentryError(key);
        return context.join(holder, async () => fn(holder.lease));
      }
      // Outside transactions (the common case) nothing below asks the synchronizer again, and the call's only
      // async step is the scope's own (runLocked awaits the acquisition).
      if (!this.host.isTransactionActive()) return this.runLocked(key, this.host.acquireForScope(key, options), fn);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.runInTransaction(key, options, fn);
  }

  private async runInTransaction<T>(key: string, options: AcquireOptions, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    const { context, owned } = this.host;
    const frame = owned.frameFor(key);
    if (frame) {
      this.assertJoinable(key, frame.lease, options);
      return context.join(frame, async () => fn(frame.lease));
    }
    // Siblings of one transaction join each other's plain lease; shaped ones each take their own.
    const siblings = asksForShape(options) ? undefined : owned.watchSiblings(key, options.signal);
    if (!siblings) return this.runLocked(key, this.host.acquireForScope(key, options), fn);
    let lease: Lease;
    try {
      lease = await this.host.acquireForScope(key, { ...options, signal: siblings.signal });
    } catch (error) {
      const joinable = siblings.joinable(error);
      if (!joinable) throw error;
      // A sibling's lease may be a read lease of the key: joined only where joining it is allowed.
      this.assertJoinable(key, joinable.lease, options);
      return context.join(joinable, async () => fn(joinable.lease));
    } finally {
      siblings.done();
    }
    return this.runLocked(key, lease, fn);
  }

  /** Upgrades and shapes that do not mix are refused whether or not the call is `reentrant`. */
  private assertJoinable(key: string, held: Lease, options: AcquireOptions): void {
    const heldShape = this.host.shapeOf(held);
    if (heldShape === undefined && !asksForShape(options)) return;
    const refusal = reentryRefusal(key, heldShape, lockShapeOption(options));
    if (refusal) throw refusal;
  }

  /** `acquired`: the scope's lease, or the acquisition that gives it (awaited here, the scope's one async step). */
  private async runLocked<T>(key: string, acquired: Promise<Lease> | Lease, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    const lease = await acquired;
    const { context, deferral } = this.host;
    let value: T | undefined;
    let failed = false;
    let failure: unknown;
    const frame = context.open(lease);
    try {
      value = await context.runIn(frame, fn);
    } catch (error) {
      failed = true;
      failure = error;
    } finally {
      context.close(frame);
    }
    // Released now, or held by the transaction the call ran in until it completes. A failed release is
    // reported through the 'release-failed' event; the key expires on its own.
    try {
      await deferral.endScope(lease);
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      throw new LeaseLostError(key, error.reason, failed ? { cause: failure } : undefined);
    }
    if (failed) throw failure;
    return value as T;
  }
}
