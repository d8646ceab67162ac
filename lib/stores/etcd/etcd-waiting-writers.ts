import type { AcquireResult } from '../lock-store.interface.js';
import type { EtcdLease } from './etcd-grants.js';
import { encodeWaiterValue } from './etcd-key-layout.js';
import type { EtcdStoreContext } from './etcd-store-context.js';
import { enqueueTxn } from './txns/enqueue.txn.js';
import { keepAliveOnce } from './txns/leases.rpc.js';
import { moveToLeaseTxn } from './txns/move-to-lease.txn.js';
import { positionTxn } from './txns/position.txn.js';

/** A turned-away writer's place in the queue, kept between its single attempts. */
interface WaitingWriter {
  readonly key: string;
  readonly waiterKey: Buffer;
  readonly createRevision: number;
  /** Of the waiting length (`waitingMs`), not the lease length: a writer that stops asking frees readers then. */
  readonly lease: EtcdLease;
  /** Local time the lease was granted or last kept alive. */
  refreshedAt: number;
}

/** Forgotten once the place's lease has surely run out: twice its TTL without an attempt. */
const FORGET_AFTER_TTLS = 2;

/**
 * Writers whose single attempt (`acquireShared` without the queue: a store used directly, or a caller
 * that retries on release notifications) was turned away with `waitingMs > 0`. In etcd a waiting writer
 * keeps later readers out by being in the queue: such a writer's key stays there, on a lease of
 * `waitingMs` (rounded up to whole seconds), so its place lasts as long as it goes on asking and no longer
 * (a writer that died frees readers when that lease runs out). Each attempt of the same token keeps the
 * lease alive and reads the place; once nothing is before it, the key moves to a lease of the grant's
 * length (a put that keeps its create revision, the fencing token) and the writer holds.
 */
export class EtcdWaitingWriters {
  private readonly byToken = new Map<string, WaitingWriter>();

  constructor(private readonly context: EtcdStoreContext) {}

  /** Puts the writer's key at the back of the queue, on a lease of `waitingMs`. */
  async join(key: string, token: string, waitingMs: number, holder: string): Promise<void> {
    this.sweep(Date.now());
    const { rpc, commands, layout } = this.context;
    const sentAt = Date.now();
    const lease = await this.context.grantHold(key, waitingMs, 'acquire');
    const waiterKey = layout.waiterKey(key, lease.id, 'write');
    const value = encodeWaiterValue({ holder, leaseMs: waitingMs });
    const joined = await commands.run(
      'acquire',
      key,
      (options) => enqueueTxn(rpc, options, { lock: layout.lockRange(key), waiterKey, leaseId: lease.id, value }),
      () => this.context.revokeLater(lease),
    );
    this.byToken.set(token, { key, waiterKey, createRevision: joined.createRevision, lease, refreshedAt: sentAt });
  }

  /**
   * The next attempt of a writer that keeps a place: the grant once nothing is before it, a denial while
   * something is (its place kept for another `waitingMs`), or undefined when it keeps none (never turned
   * away, or its place ran out): the caller then attempts afresh. A store error gives the place up.
   */
  async attempt(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult | undefined> {
    const place = this.byToken.get(token);
    if (place?.key !== key) return undefined;
    this.byToken.delete(token);
    const { rpc, commands, layout } = this.context;
    const leave = (): void => this.context.revokeLater(place.lease);
    const sentAt = Date.now();
    const ttls = await commands.run('acquire', key, (options) => keepAliveOnce(rpc, options, [place.lease.id]), leave);
    if ((ttls.get(place.lease.id) ?? 0) <= 0) return undefined;
    const { waiterKey, createRevision } = place;
    const position = await commands.run('acquire', key, (options) => positionTxn(rpc, options, { lock: layout.lockRange(key), waiterKey, createRevision }), leave);
    if (!position.present) {
      leave();
      return undefined;
    }
    if (position.predecessor !== undefined) {
      place.refreshedAt = sentAt;
      this.byToken.set(token, place);
      return { acquired: false, ttlMs: -1 };
    }
    // Nothing before it: the writer holds already, by the queue's rule. The key goes to a lease of the grant's length.
    const grantedAt = Date.now();
    let lease: EtcdLease;
    try {
      lease = await this.context.grantLease('acquire', key, leaseMs);
    } catch (error) {
      leave();
      throw error;
    }
    const value = encodeWaiterValue({ holder, leaseMs });
    const moved = await commands.run(
      'acquire',
      key,
      (options) => moveToLeaseTxn(rpc, options, { waiterKey, createRevision, fromLeaseId: place.lease.id, leaseId: lease.id, value }),
      // Wherever the key is, revoking both leases deletes it: the writer gives its place up.
      () => {
        this.context.revokeLater(lease);
        leave();
      },
    );
    // The place's lease holds nothing now (the key moved off it, or went).
    leave();
    if (!moved) {
      this.context.revokeLater(lease);
      return undefined;
    }
    this.context.remember(token, { key, waiterKey, fencingToken: createRevision, holder, leaseId: lease.id, ttlSeconds: lease.ttlSeconds, leaseMs, refreshedAt: grantedAt });
    return { acquired: true, fencingToken: createRevision };
  }

  /** Gives every place up (the store closes): readers need not wait for those leases to run out. */
  clear(): void {
    for (const place of this.byToken.values()) this.context.revokeLater(place.lease);
    this.byToken.clear();
  }

  private sweep(now: number): void {
    for (const [token, place] of this.byToken) {
      if (now - place.refreshedAt > FORGET_AFTER_TTLS * place.lease.ttlSeconds * 1_000) this.byToken.delete(token);
    }
  }
}
