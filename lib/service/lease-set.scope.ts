import { LeaseLostError } from '../errors/lease-lost.error.js';
import { LockReentryError } from '../errors/lock-reentry.error.js';
import type { LeaseContext, LeaseFrame } from '../lease/lease-context.js';
import { LeaseSet } from '../lease/lease-set.js';
import type { Lease } from '../lease/lease.js';
import { acquireKeys, type AcquireOneKey } from './lease-set.acquisition.js';
import type { AcquireOptions } from '../options/acquire-options.interface.js';
import type { LeaseDeferral } from '../transactions/lease-deferral.js';
import type { TransactionOwnedLeases } from '../transactions/transaction-owned-leases.js';
import { ScopeStorage } from '../support/scope-storage.js';

const ignore = (): void => undefined;

/** What a multi-key scope runs with: the LockService's context, release after commit, and its acquisition. */
export interface LeaseSetScopeHost {
  readonly context: LeaseContext;
  readonly deferral: LeaseDeferral;
  readonly owned: TransactionOwnedLeases;
  isTransactionActive(): boolean;
  /** The single-key acquisition of a scope (the caller looked for the key in its chain already). */
  acquireKey(key: string, options: AcquireOptions, waitMs: number): Promise<Lease>;
  /** The call's `waitMs`, or the module's. */
  waitMs(options: AcquireOptions): number;
  /** Throws `LockUpgradeError` (or `LockReentryError`) when `lease`, held here, is a shape an exclusive key may not join. */
  assertJoinable(key: string, lease: Lease): void;
}

/**
 * One multi-key scope; `open` turns false when it ends: work it left running (a timer, `void this.audit()`)
 * must not see its set, but still sees the set of an enclosing scope that runs on.
 */
interface SetFrame {
  readonly set: LeaseSet;
  readonly parent: SetFrame | undefined;
  open: boolean;
}

/**
 * The multi-key scopes of one LockService (`withLocks`, `@DistributedLock({ keys })`), and which one the
 * current call chain runs in.
 */
export class LeaseSetScopes {
  private readonly storage = new ScopeStorage<SetFrame>();

  constructor(private readonly host: LeaseSetScopeHost) {}

  /** The application has shut down: the storage is given back once no scope runs (see `ScopeStorage`). */
  dispose(): void {
    this.storage.dispose();
  }

  /** The set of the innermost multi-key scope still running in this call chain. */
  current(): LeaseSet | undefined {
    let frame = this.storage.getStore();
    while (frame && !frame.open) frame = frame.parent;
    return frame?.set;
  }

  /**
   * `withLocks`: runs `fn` holding every key of `keys` (already in the global order), each key exactly as
   * `withLock` holds one. A key this call chain holds already fails fast with `LockReentryError`, or, with
   * `reentrant`, is joined (as is one the current transaction holds, which owns it until it completes); the
   * other keys are then taken all or nothing. Each lease taken here ends its scope as a single lease does:
   * released now, or held by the transaction the call ran in until that has committed or rolled back. A
   * business error from `fn` passes through unchanged; a lease of the set lost meanwhile makes the call end in
   * that lease's `LeaseLostError` (with `fn`'s error, if any, as cause).
   */
  async run<T>(keys: readonly string[], options: AcquireOptions, fn: (leases: LeaseSet) => Promise<T> | T): Promise<T> {
    const { host } = this;
    const joined = new Map<string, LeaseFrame>();
    const inTransaction = host.isTransactionActive();
    // Every key is looked up before anything is taken, so a refused re-entry leaves nothing held.
    for (const key of keys) {
      const holder = host.context.holding(key);
      if (holder && !options.reentrant) throw new LockReentryError(key);
      const frame = holder ?? (inTransaction ? host.owned.frameFor(key) : undefined);
      if (frame) {
        // Each key of a set is held exclusively: a read lease of it may not stand in (an upgrade).
        host.assertJoinable(key, frame.lease);
        joined.set(key, frame);
      }
    }
    const fresh = keys.filter((key) => !joined.has(key));
    const acquired = fresh.length === 0 ? undefined : await acquireKeys(fresh, host.waitMs(options), this.acquireOne(options, inTransaction));
    const taken = acquired?.taken ?? [];
    for (const [key, frame] of acquired?.joined ?? []) joined.set(key, frame);
    const byKey = new Map<string, Lease>(taken.map((lease) => [lease.key, lease]));
    const set = new LeaseSet(keys.map((key) => joined.get(key)?.lease ?? byKey.get(key)!));
    const frames = [...joined.values()];
    let started = false;
    const underJoined = async (index: number): Promise<T> => {
      if (index < frames.length) return host.context.join(frames[index]!, () => underJoined(index + 1));
      started = true;
      const frame: SetFrame = { set, parent: this.storage.getStore(), open: true };
      this.storage.enter();
      try {
        return await this.storage.run(frame, () => runLocked(host, taken, () => fn(set)));
      } finally {
        frame.open = false;
        this.storage.leave();
      }
    };
    try {
      return await underJoined(0);
    } finally {
      // A joined lease found lost before the body ran: the keys taken for it go back at once.
      if (!started) await Promise.all(taken.map((lease) => lease.release().catch(ignore)));
    }
  }

  /**
   * One key of a scope. Inside a transaction, a key it already owns is joined, and a wait for a key is cut
   * short when a concurrent sibling of the transaction leaves that key to it (its lease is then joined
   * instead: waiting would last until the COMMIT this call is part of), as `withLock` does for one key.
   * Looked up right before the wait starts, with nothing awaited in between, so no hand-over slips past.
   */
  private acquireOne(options: AcquireOptions, inTransaction: boolean): AcquireOneKey {
    const { host } = this;
    return async (key, waitMs) => {
      const owned = inTransaction ? host.owned.frameFor(key) : undefined;
      if (owned) return owned;
      const siblings = inTransaction ? host.owned.watchSiblings(key, options.signal) : undefined;
      if (!siblings) return host.acquireKey(key, options, waitMs);
      try {
        return await host.acquireKey(key, { ...options, signal: siblings.signal }, waitMs);
      } catch (error) {
        const frame = siblings.joinable(error);
        if (!frame) throw error;
        return frame;
      } finally {
        siblings.done();
      }
    };
  }
}

/** Runs `fn` as the scope of every lease in `taken`, then ends each scope, reporting a loss first. */
async function runLocked<T>(host: LeaseSetScopeHost, taken: readonly Lease[], fn: () => Promise<T> | T): Promise<T> {
  const inside = async (index: number): Promise<T> => {
    if (index >= taken.length) return await fn();
    const frame = host.context.open(taken[index]!);
    try {
      return await host.context.runIn(frame, () => inside(index + 1));
    } finally {
      host.context.close(frame);
    }
  };
  let value: T | undefined;
  let failed = false;
  let failure: unknown;
  try {
    value = await inside(0);
  } catch (error) {
    failed = true;
    failure = error;
  }
  const ended = await Promise.allSettled(taken.map((lease) => host.deferral.endScope(lease)));
  let lost: LeaseLostError | undefined;
  for (const outcome of ended) {
    if (outcome.status !== 'rejected') continue;
    // A broken transaction integration: the key went back at once (see LeaseDeferral.endScope).
    if (!(outcome.reason instanceof LeaseLostError)) throw outcome.reason;
    lost ??= outcome.reason;
  }
  if (lost) throw new LeaseLostError(lost.key, lost.reason, failed ? { cause: failure } : undefined);
  if (failed) throw failure;
  return value as T;
}
