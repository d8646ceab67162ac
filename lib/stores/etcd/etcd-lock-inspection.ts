import { globToRegExp } from '../key-glob.js';
import type { ForceReleaseResult, HeldLock } from '../lock-store.interface.js';
import type { EtcdCommands } from './etcd-commands.js';
import { decodeWaiterValue, type EtcdKeyLayout } from './etcd-key-layout.js';
import { remainingMs } from './etcd-lease-length.js';
import { revision, type EtcdRpc, type KeyValue } from './txns/etcd-rpc.js';
import { leaseTtl, revokeLease } from './txns/leases.rpc.js';
import { allKeysQuery, keyQuery, ownerQuery } from './txns/owners.query.js';
import { releaseTxn } from './txns/release.txn.js';

/** A lease id of 0 means the key has no lease: not one of ours (someone wrote it by hand). */
const NO_LEASE = '0';

/** How often force-release re-reads the owner when the key moved to another lease under its hands. */
const FORCE_RELEASE_ROUNDS = 5;

/** The read side of the runbook (inspect, list) and its one deliberate override (force-release). */
export class EtcdLockInspection {
  constructor(
    private readonly rpc: EtcdRpc,
    private readonly commands: EtcdCommands,
    private readonly layout: EtcdKeyLayout,
  ) {}

  async inspect(key: string): Promise<HeldLock | null> {
    const owner = await this.commands.run('inspect', key, (options) => ownerQuery(this.rpc, options, this.layout.lockRange(key)));
    return owner ? this.describe(key, owner) : null;
  }

  async list(match: string): Promise<HeldLock[]> {
    const pattern = globToRegExp(match);
    const keys = await allKeysQuery(this.rpc, (request) => this.commands.run('list', match, request), this.layout.prefixRange());
    const owners = new Map<string, KeyValue>();
    for (const kv of keys) {
      const key = this.layout.lockKeyOf(kv.key);
      if (key === undefined || !pattern.test(key)) continue;
      const current = owners.get(key);
      if (!current || revision(kv.create_revision) < revision(current.create_revision)) owners.set(key, kv);
    }
    const held: HeldLock[] = [];
    for (const [key, owner] of owners) {
      const lock = await this.describe(key, owner);
      if (lock) held.push(lock);
    }
    return held.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * Takes the lock from whoever holds it by revoking the owner's etcd lease: that deletes exactly the key
   * of that one grant (every grant has its own lease), which wakes the next waiter, and the holder's next
   * keep-alive finds its lease gone. Only the grant whose key was created at `fencingToken` is taken, so a
   * holder that took over after the operator looked is never the one removed. Without a token, the owner
   * this call sees first is the one the operator meant: if its grant ends on its own meanwhile (its lease
   * runs out between the look and the revoke), the lock is reported not held, and its successor is left
   * alone.
   */
  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    let target = fencingToken;
    for (let round = 0; round < FORCE_RELEASE_ROUNDS; round++) {
      const owner = await this.commands.run('force-release', key, (options) => ownerQuery(this.rpc, options, this.layout.lockRange(key)));
      if (!owner) return { released: false, reason: 'not-held' };
      const createRevision = revision(owner.create_revision);
      target ??= createRevision;
      if (createRevision !== target && fencingToken === undefined) return { released: false, reason: 'not-held' };
      const lock = await this.describe(key, owner);
      if (!lock) continue;
      if (createRevision !== target) return { released: false, reason: 'fencing-mismatch', current: lock };
      if (owner.lease === NO_LEASE) {
        if (await this.commands.run('force-release', key, (options) => releaseTxn(this.rpc, options, owner.key, createRevision))) {
          return { released: true, lock };
        }
        continue;
      }
      const revoked = await this.commands.run('force-release', key, (options) => revokeLease(this.rpc, options, owner.lease));
      // The holder may have moved its key to a new lease meanwhile (extend, minimum hold): look again.
      const now = await this.commands.run('force-release', key, (options) => keyQuery(this.rpc, options, owner.key));
      const stillThere = now !== undefined && revision(now.create_revision) === createRevision;
      if (!stillThere && revoked) return { released: true, lock };
    }
    throw this.commands.unavailable('force-release', key, 'the holder kept moving its key to new leases');
  }

  /** The lock as the runbook shows it; null when its lease ran out between the two reads. */
  private async describe(key: string, owner: KeyValue): Promise<HeldLock | null> {
    const value = decodeWaiterValue(owner.value);
    const fencingToken = revision(owner.create_revision);
    if (owner.lease === NO_LEASE) return { key, fencingToken, holder: value.holder, ttlMs: -1 };
    const ttl = await this.commands.run('inspect', key, (options) => leaseTtl(this.rpc, options, owner.lease));
    if (ttl < 0) return null;
    return { key, fencingToken, holder: value.holder, ttlMs: remainingMs(ttl, value.leaseMs) };
  }
}
