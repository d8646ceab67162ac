import { lockShapeName, type LockShape } from '../lock-shape.js';
import type { AcquireResult } from '../lock-store.interface.js';
import type { EtcdLease } from './etcd-grants.js';
import { decodeWaiterValue, encodeWaiterValue } from './etcd-key-layout.js';
import { queueWait } from '../queue/queue-order.js';
import { queueEntryOf } from './etcd-queue-order.js';
import type { EtcdStoreContext } from './etcd-store-context.js';
import { acquireTxn, type AcquireTxnInput } from './txns/acquire.txn.js';
import { revision, type KeyValue } from './txns/etcd-rpc.js';
import { keyQuery, queueQuery } from './txns/owners.query.js';
import { permitAcquireTxn } from './txns/permit-acquire.txn.js';
import { readerAcquireTxn } from './txns/reader-acquire.txn.js';

/**
 * How often a permit's single attempt reads the queue again when keys joined it between its read and its
 * put. Each round lost is another acquisition that got in first; past this many, the key is too busy for
 * one attempt and the answer is a denial.
 */
const PERMIT_ROUNDS = 8;

type Attempt = { readonly granted: true; readonly fencingToken: number } | { readonly granted: false; readonly ttlMs: number };

/**
 * Single attempts (`acquire`, `acquireShared`). A plain lock's key is put only on an empty lock (one
 * transaction), as etcd's `Mutex.TryLock` does. A read/write lock's or semaphore's key is put only where the
 * queue's rule (queue/queue-order.ts) admits it at the back of the queue, so a denied attempt leaves
 * nothing behind and never overtakes a waiter. A writer is granted on an empty lock (as a plain lock is),
 * a reader on a lock of readers only (one transaction comparing the two non-reader ranges empty), a permit
 * when the queue read just before holds only permit holders, fewer than its N (then a transaction that puts
 * the key if no key joined since). Each grant is its own key on its own lease; its create revision is the
 * fencing token, from the same revision counter as every other grant of the key.
 *
 * A writer's `waitingMs` is not kept: a turned-away writer keeps nobody out, whatever it asked. On etcd a
 * waiting writer keeps later readers out by its key in the queue (`acquireSharedQueued`, which LockService
 * uses for every waiting writer); a key queued for a caller that was told "denied" could become the holder
 * before the caller asks again, and hold for nobody until its lease ran out.
 */
export class EtcdSingleAttempts {
  constructor(private readonly context: EtcdStoreContext) {}

  async plain(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    const { rpc, commands, layout } = this.context;
    const sentAt = Date.now();
    const lease = await this.context.grantLease('acquire', key, leaseMs);
    const waiterKey = layout.waiterKey(key, lease.id);
    const value = encodeWaiterValue({ holder, leaseMs });
    // Without an answer the key may exist: revoking the lease deletes it, or keeps a late put from landing.
    const outcome = await commands.run(
      'acquire',
      key,
      (options) => acquireTxn(rpc, options, { lock: layout.lockRange(key), waiterKey, leaseId: lease.id, value }),
      () => this.context.revokeLater(lease),
    );
    if (!outcome.granted) {
      this.context.revokeLater(lease);
      return { acquired: false, ttlMs: holderTtl(outcome.owner) };
    }
    const { fencingToken } = outcome;
    this.context.remember(token, { key, waiterKey, fencingToken, holder, leaseId: lease.id, ttlSeconds: lease.ttlSeconds, leaseMs, refreshedAt: sentAt });
    return { acquired: true, fencingToken };
  }

  async shaped(key: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    const again = await this.heldAlready(key, token);
    if (again) return again;
    const name = lockShapeName(shape);
    const { layout } = this.context;
    const sentAt = Date.now();
    const lease = await this.context.grantLease('acquire', key, leaseMs);
    const waiterKey = layout.waiterKey(key, lease.id, name);
    const input: AcquireTxnInput = { lock: layout.lockRange(key), waiterKey, leaseId: lease.id, value: encodeWaiterValue({ holder, leaseMs, permits: shape.permits }) };
    const outcome = await this.attempt(key, shape, input, lease);
    if (!outcome.granted) {
      this.context.revokeLater(lease);
      return { acquired: false, ttlMs: outcome.ttlMs };
    }
    const { fencingToken } = outcome;
    const grant = { key, waiterKey, fencingToken, holder, permits: shape.permits, leaseId: lease.id, ttlSeconds: lease.ttlSeconds, leaseMs, refreshedAt: sentAt };
    this.context.remember(token, grant);
    return { acquired: true, fencingToken };
  }

  /** One transaction (or, for a permit, a read and a transaction per round); without an answer, the lease is revoked, which deletes a key that landed. */
  private attempt(key: string, shape: LockShape, input: AcquireTxnInput, lease: EtcdLease): Promise<Attempt> {
    const { rpc, commands, layout } = this.context;
    const undo = (): void => this.context.revokeLater(lease);
    if (shape.permits !== undefined) return this.permit(key, shape.permits, input, undo);
    const txn = shape.mode === 'read'
      ? commands.run('acquire', key, (options) => readerAcquireTxn(rpc, options, { ...input, nonReaders: layout.nonReaderRanges(key) }), undo)
      : commands.run('acquire', key, (options) => acquireTxn(rpc, options, input), undo);
    return txn.then((outcome) => (outcome.granted ? outcome : { granted: false, ttlMs: holderTtl(outcome.owner) }));
  }

  private async permit(key: string, permits: number, input: AcquireTxnInput, undo: () => void): Promise<Attempt> {
    const { rpc, commands, layout } = this.context;
    for (let round = 0; round < PERMIT_ROUNDS; round++) {
      const queue = await commands.run('acquire', key, (options) => queueQuery(rpc, options, input.lock), undo);
      const entries = queue.kvs.map((kv) => queueEntryOf(layout, kv));
      // A put whose answer was lost and that etcd3 sent again finds its own key there: it landed, and holds.
      const mine = entries.find((entry) => entry.key.equals(input.waiterKey));
      if (mine) return { granted: true, fencingToken: mine.createRevision };
      if (queueWait(entries, 'permits', permits).kind !== 'granted') return { granted: false, ttlMs: holderTtl(queue.kvs[0]) };
      const put = await commands.run('acquire', key, (options) => permitAcquireTxn(rpc, options, { ...input, seenAt: queue.revision }), undo);
      if (put.granted) return put;
    }
    return { granted: false, ttlMs: -1 };
  }

  /**
   * A re-sent acquisition of a token that holds the key (its answer was lost on the way back, say) is
   * granted again under the same fencing token, if its key is still there as created.
   */
  private async heldAlready(key: string, token: string): Promise<AcquireResult | undefined> {
    const grant = this.context.grants.get(key, token);
    if (!grant) return undefined;
    const { rpc, commands } = this.context;
    const kv = await commands.run('acquire', key, (options) => keyQuery(rpc, options, grant.waiterKey));
    if (kv && revision(kv.create_revision) === grant.fencingToken) return { acquired: true, fencingToken: grant.fencingToken };
    this.context.forget(token, grant);
    return undefined;
  }
}

/** The first holder's requested length stands in for its remaining TTL: asking etcd costs another round trip. */
function holderTtl(owner: KeyValue | undefined): number {
  const { leaseMs } = decodeWaiterValue(owner?.value);
  return Number.isFinite(leaseMs) ? leaseMs : -1;
}
