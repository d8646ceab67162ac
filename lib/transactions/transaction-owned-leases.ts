import { AsyncResource } from 'node:async_hooks';
import { followSignals } from '../support/follow-signals.js';
import { processWide } from '../support/process-wide.js';
import type { TransactionSynchronizer } from './transaction-synchronizer.interface.js';
import type { LeaseFrame } from '../lease/lease-context.js';
import type { Lease } from '../lease/lease.js';

/**
 * Numbers the LockServices of the process. Per process, not per copy of the package: the transactions
 * that keep the leases are shared by both copies of a dual-loaded package, and two services of different
 * copies must never read each other's leases as their own.
 */
const services = processWide('lock-service-count', () => ({ next: 0 }));

/** Why a waiter's acquisition was cut short: a sibling of its transaction deferred the key's lease to it. */
const SIBLING_DEFERRED = new Error('a locked call of the same transaction deferred this key to it');

/** A locked call of a transaction waiting for a key a sibling of the same transaction may hold. */
export interface SiblingWatch {
  /** Aborts the wait when a sibling of the transaction defers the key's lease to it. */
  readonly signal: AbortSignal;
  /** The frame to join instead, if `error` is the wait cut short for that reason. */
  joinable(error: unknown): LeaseFrame | undefined;
  done(): void;
}

interface Watcher {
  readonly lookup: () => LeaseFrame | undefined;
  readonly controller: AbortController;
  frame?: LeaseFrame;
}

/**
 * The leases a LockService deferred to transactions, kept in those transactions (through the
 * synchronizer's `retain`) as frames that later locked calls on the same key join: the transaction that
 * holds a deferred lease owns its key, instead of deadlocking on it until `waitMs`.
 */
export class TransactionOwnedLeases {
  /** Names this service's leases among everything the transactions keep. */
  private readonly prefix = `nestjs-distributed-lock:${++services.next}:`;
  private readonly frames = new WeakMap<Lease, LeaseFrame>();
  private readonly watchers = new Map<string, Set<Watcher>>();

  constructor(private readonly transactions: TransactionSynchronizer) {}

  retain(lease: Lease): void {
    this.transactions.retain?.(this.prefix + lease.key, this.frameOf(lease));
    // Siblings of the transaction already waiting for this key (`Promise.all` of two locked steps) would
    // wait for a release that only comes after the COMMIT they are part of: they join the lease instead.
    for (const watcher of this.watchers.get(lease.key) ?? []) {
      const frame = watcher.lookup();
      if (frame?.lease !== lease) continue;
      watcher.frame = frame;
      watcher.controller.abort(SIBLING_DEFERRED);
    }
  }

  /**
   * Inside a transaction, watches for a sibling of it deferring `key`'s lease to it while this call waits
   * for the key (and follows `signal`). Undefined outside transactions, or with a synchronizer that cannot
   * keep leases.
   */
  watchSiblings(key: string, signal: AbortSignal | undefined): SiblingWatch | undefined {
    if (!this.transactions.retained || !this.transactions.isTransactionActive()) return undefined;
    const controller = new AbortController();
    const followed = signal ? followSignals(signal, controller.signal) : undefined;
    // Looked up later from the deferring sibling's context, but in this call's own transaction.
    const watcher: Watcher = { lookup: AsyncResource.bind(() => this.frameFor(key)), controller };
    const watchers = this.watchers.get(key) ?? new Set<Watcher>();
    watchers.add(watcher);
    this.watchers.set(key, watchers);
    return {
      signal: followed?.signal ?? controller.signal,
      joinable: (error) => (error === SIBLING_DEFERRED ? watcher.frame : undefined),
      done: () => {
        followed?.stop();
        watchers.delete(watcher);
        if (watchers.size === 0 && this.watchers.get(key) === watchers) this.watchers.delete(key);
      },
    };
  }

  /** The frame of the lease a transaction of the current context keeps for `key` (held, or lost). */
  frameFor(key: string): LeaseFrame | undefined {
    const frame = this.transactions.retained?.(this.prefix + key) as LeaseFrame | undefined;
    return frame && (frame.lease.held || frame.lease.lostError) ? frame : undefined;
  }

  private frameOf(lease: Lease): LeaseFrame {
    let frame = this.frames.get(lease);
    if (!frame) {
      frame = { lease, parent: undefined, open: true, joined: Promise.resolve() };
      this.frames.set(lease, frame);
    }
    return frame;
  }
}
