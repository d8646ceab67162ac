import { globToRegExp } from '../key-glob.js';
import type { ForceReleaseResult, HeldLock } from '../lock-store.interface.js';
import type { EtcdCommands } from './etcd-commands.js';
import { decodeWaiterValue, type EtcdKeyLayout } from './etcd-key-layout.js';
import { remainingMs } from './etcd-lease-length.js';
import { holdingCount } from '../queue/queue-order.js';
import { queueEntryOf } from './etcd-queue-order.js';
import { revision, type EtcdRpc, type KeyValue } from './txns/etcd-rpc.js';
import { leaseTtl, revokeLease } from './txns/leases.rpc.js';
import { allKeysQuery, keyQuery, ownerQuery, queueQuery } from './txns/owners.query.js';
import { releaseTxn } from './txns/release.txn.js';

/** A lease id of 0 means the key has no lease: not one of ours (someone wrote it by hand). */
const NO_LEASE = '0';

/** How often force-release looks again when a hold moved its key to another lease under its hands. */
const FORCE_RELEASE_ROUNDS = 5;

/**
 * The read side of the runbook (inspect, list) and its one deliberate override (force-release). A lock is
 * held by the front of its queue (queue/queue-order.ts): one plain holder or writer, or every reader or
 * permit holder, each listed on its own line with its shape, fencing token and TTL; waiters are not listed.
 */
export class EtcdLockInspection {
  constructor(
    private readonly rpc: EtcdRpc,
    private readonly commands: EtcdCommands,
    private readonly layout: EtcdKeyLayout,
  ) {}

  /** The first holder (the front of the queue always holds). */
  async inspect(key: string): Promise<HeldLock | null> {
    const owner = await this.commands.run('inspect', key, (options) => ownerQuery(this.rpc, options, this.layout.lockRange(key)));
    return owner ? this.describe(key, owner) : null;
  }

  async list(match: string): Promise<HeldLock[]> {
    const pattern = globToRegExp(match);
    const keys = await allKeysQuery(this.rpc, (request) => this.commands.run('list', match, request), this.layout.prefixRange());
    const queues = new Map<string, KeyValue[]>();
    for (const kv of keys) {
      const key = this.layout.lockKeyOf(kv.key);
      if (key === undefined || !pattern.test(key)) continue;
      const queue = queues.get(key);
      if (queue) queue.push(kv);
      else queues.set(key, [kv]);
    }
    const held: HeldLock[] = [];
    for (const [key, queue] of queues) {
      queue.sort((a, b) => revision(a.create_revision) - revision(b.create_revision));
      for (const kv of queue.slice(0, holdingCount(queue.map((entry) => queueEntryOf(this.layout, entry))))) {
        const lock = await this.describe(key, kv);
        if (lock) held.push(lock);
      }
    }
    // Stable: the holders of one key stay in queue order.
    return held.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * Takes holds away by revoking their etcd leases: that deletes exactly the key of each grant (every
   * grant has its own lease), which wakes whoever waited for it, and the holder's next keep-alive finds its
   * lease gone. With `fencingToken`, only the hold whose key was created at it, so a holder that took over
   * after the operator looked is never the one removed. Without one, every hold this call sees first (the
   * one plain holder or writer; every reader or permit holder): a hold that ends on its own meanwhile
   * (its lease runs out between the look and the revoke) is not counted, and no later holder is taken in
   * its place.
   */
  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    if (fencingToken === undefined) {
      let first: HeldLock | undefined;
      for (const hold of await this.holders(key)) {
        const taken = await this.take(key, hold);
        first ??= taken;
      }
      return first ? { released: true, lock: first } : { released: false, reason: 'not-held' };
    }
    for (let round = 0; round < FORCE_RELEASE_ROUNDS; round++) {
      const holders = await this.holders(key);
      const target = holders.find((kv) => revision(kv.create_revision) === fencingToken);
      if (!target) {
        if (!holders[0]) return { released: false, reason: 'not-held' };
        const current = await this.describe(key, holders[0]);
        if (current) return { released: false, reason: 'fencing-mismatch', current };
        continue;
      }
      const taken = await this.take(key, target);
      if (taken) return { released: true, lock: taken };
    }
    throw this.commands.unavailable('force-release', key, 'the holds kept ending or moving under the operator’s hands');
  }

  private async holders(key: string): Promise<KeyValue[]> {
    const { kvs } = await this.commands.run('force-release', key, (options) => queueQuery(this.rpc, options, this.layout.lockRange(key)));
    return kvs.slice(0, holdingCount(kvs.map((kv) => queueEntryOf(this.layout, kv))));
  }

  /** Takes one hold away: what it was, or undefined when it ended on its own first. */
  private async take(key: string, hold: KeyValue): Promise<HeldLock | undefined> {
    const createRevision = revision(hold.create_revision);
    let current = hold;
    for (let round = 0; round < FORCE_RELEASE_ROUNDS; round++) {
      const lock = await this.describe(key, current);
      if (lock && current.lease === NO_LEASE) {
        const deleted = await this.commands.run('force-release', key, (options) => releaseTxn(this.rpc, options, hold.key, createRevision));
        return deleted ? lock : undefined;
      }
      const revoked = lock !== null && (await this.commands.run('force-release', key, (options) => revokeLease(this.rpc, options, current.lease)));
      // The holder may have moved its key to a new lease meanwhile (extend, minimum hold): look again.
      const now = await this.commands.run('force-release', key, (options) => keyQuery(this.rpc, options, hold.key));
      if (now === undefined || revision(now.create_revision) !== createRevision) return revoked ? lock! : undefined;
      current = { ...hold, lease: now.lease };
    }
    throw this.commands.unavailable('force-release', key, 'the holder kept moving its key to new leases');
  }

  /** A hold as the runbook shows it; null when its lease ran out between the two reads. */
  private async describe(key: string, kv: KeyValue): Promise<HeldLock | null> {
    const value = decodeWaiterValue(kv.value);
    const fencingToken = revision(kv.create_revision);
    const parsed = this.layout.parse(kv.key)?.shape;
    const shape = parsed === undefined || parsed === 'plain' ? {} : { shape: parsed };
    if (kv.lease === NO_LEASE) return { key, fencingToken, holder: value.holder, ttlMs: -1, ...shape };
    const ttl = await this.commands.run('inspect', key, (options) => leaseTtl(this.rpc, options, kv.lease));
    if (ttl < 0) return null;
    return { key, fencingToken, holder: value.holder, ttlMs: remainingMs(ttl, value.leaseMs), ...shape };
  }
}
