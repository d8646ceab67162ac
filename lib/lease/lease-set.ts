import { LeaseLostError } from '../errors/lease-lost.error.js';
import type { Lease } from './lease.js';

/**
 * Several keys held together, all or nothing (`LockService.acquire([...])`, `tryAcquire([...])`,
 * `withLocks`, `@DistributedLock({ keys })`). Each key has a lease of its own, with its own fencing token,
 * renewed by the application's one watchdog in the same batches as every other lease; the set is lost as
 * soon as any one of them is: `signal` aborts with that lease's `LeaseLostError`. `await using` releases
 * every key.
 */
export class LeaseSet implements AsyncDisposable {
  /** The keys, without the module's prefix, in the global order they were taken in (duplicates collapsed). */
  readonly keys: readonly string[];
  /** The lease of each key, in `keys` order. */
  readonly leases: ReadonlyMap<string, Lease>;
  /** The fencing token of each key: pass each to the resource that key protects. */
  readonly fencingTokens: ReadonlyMap<string, number>;
  readonly #list: readonly Lease[];
  declare private combined?: AbortSignal;
  declare private releasing?: Promise<void>;

  /** @internal Created by LockService, with the leases in the global key order. */
  constructor(leases: readonly Lease[]) {
    this.#list = leases;
    this.keys = leases.map((lease) => lease.key);
    this.leases = new Map(leases.map((lease) => [lease.key, lease]));
    this.fencingTokens = new Map(leases.map((lease) => [lease.key, lease.fencingToken]));
  }

  /**
   * Aborted, with the `LeaseLostError` of the first lease lost, as soon as any lease of the set is lost: the
   * work protected by all the keys must stop. Not aborted by a normal release.
   */
  get signal(): AbortSignal {
    return (this.combined ??= AbortSignal.any(this.#list.map((lease) => lease.signal)));
  }

  /** True until any lease of the set is released or lost. */
  get held(): boolean {
    return this.#list.every((lease) => lease.held);
  }

  /**
   * Gives every key back (each token-checked, each kept until `minHoldMs` after its grant), as
   * `Lease.release()` does for one. Idempotent. All keys are given back even when one fails; the call then
   * rejects with the `LeaseLostError` of the first lost lease (in key order), or else with the first store
   * error.
   */
  release(): Promise<void> {
    this.releasing ??= firstFailure(this.#list.map((lease) => lease.release()));
    return this.releasing;
  }

  /**
   * `await using` support: every lease is released at the end of the block, or, inside a transaction, after
   * it commits or rolls back, exactly as a single lease is; a lease lost by then makes the disposal throw
   * its `LeaseLostError`.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return firstFailure(this.#list.map((lease) => lease[Symbol.asyncDispose]()));
  }

  /** What a lease set shows when logged or serialised: never an ownership token. */
  toJSON(): { keys: readonly string[]; fencingTokens: Record<string, number>; held: boolean } {
    return { keys: this.keys, fencingTokens: Object.fromEntries(this.fencingTokens), held: this.held };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `LeaseSet ${JSON.stringify(this.toJSON())}`;
  }
}

/**
 * Waits for every key's outcome (one failing must not leave the others held), then reports the loss first:
 * a lost lease means the work may have overlapped another holder's, which matters more than a store error.
 */
export async function firstFailure(outcomes: readonly Promise<void>[]): Promise<void> {
  const settled = await Promise.allSettled(outcomes);
  let failure: PromiseRejectedResult | undefined;
  for (const outcome of settled) {
    if (outcome.status !== 'rejected') continue;
    if (outcome.reason instanceof LeaseLostError) throw outcome.reason;
    failure ??= outcome;
  }
  if (failure) throw failure.reason;
}
