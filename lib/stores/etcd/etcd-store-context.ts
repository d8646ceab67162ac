import type { Etcd3 } from 'etcd3';
import { BackgroundTasks } from '../../support/background-tasks.js';
import { EtcdCommands } from './etcd-commands.js';
import { EtcdGrants, leasesOf, type EtcdGrant, type EtcdLease } from './etcd-grants.js';
import { EtcdKeyLayout } from './etcd-key-layout.js';
import { EtcdLeaseLength, type ShortLeasePolicy } from './etcd-lease-length.js';
import type { EtcdRpc } from './txns/etcd-rpc.js';
import { grantLease, revokeLease } from './txns/leases.rpc.js';

/**
 * How long past its granted TTL a revoke is still sent through an outage. A lease's TTL is no bound on its
 * life: a new leader gives every lease its full TTL again (an election must never expire a live lease), so
 * a lease nobody keeps alive lives one more TTL per election. A revoke that gave up when the lease "would
 * have run out by itself" left its key held by nobody for that long. A revoke of a lease that is gone is
 * answered ("not found") and ends the retries, so this only bounds the retrying against an etcd that never
 * answers.
 */
const REVOKE_PAST_TTL_MS = 60_000;

export interface EtcdStoreSettings {
  readonly keyPrefix: string;
  readonly commandTimeoutMs: number;
  /** `host:port` list for error messages (`describeEndpoints`). */
  readonly endpoints: string;
  readonly shortLeases: ShortLeasePolicy;
}

/**
 * What the parts of one etcd store share: the client and its two RPC services, the per-command timeout,
 * the key layout, the lease-length rules, the grants this store holds, and its background clean-ups.
 */
export class EtcdStoreContext {
  readonly rpc: EtcdRpc;
  readonly commands: EtcdCommands;
  readonly layout: EtcdKeyLayout;
  readonly lengths: EtcdLeaseLength;
  readonly grants = new EtcdGrants();
  readonly tasks = new BackgroundTasks();

  constructor(
    readonly client: Etcd3,
    settings: EtcdStoreSettings,
  ) {
    this.rpc = { kv: client.kv, lease: client.leaseClient };
    this.commands = new EtcdCommands(settings.endpoints, settings.commandTimeoutMs);
    this.layout = new EtcdKeyLayout(settings.keyPrefix);
    this.lengths = new EtcdLeaseLength(settings.shortLeases, settings.endpoints);
  }

  /** Grants an etcd lease for `leaseMs` (rounded up to whole seconds); refuses one the server cannot make that short. */
  async grantLease(operation: string, key: string, leaseMs: number): Promise<EtcdLease> {
    const ttl = this.lengths.ttlFor(leaseMs);
    // A grant without an answer leaves at most a lease with no key, which runs out by itself.
    const lease = await this.commands.run(operation, key, (options) => grantLease(this.rpc, options, ttl));
    try {
      this.lengths.granted(leaseMs, ttl, lease.ttlSeconds);
    } catch (error) {
      this.revokeLater(lease);
      throw error;
    }
    return lease;
  }

  /** A lease for a minimum hold: "at least" `keepMs`, so rounding up is always right. */
  grantHold(key: string, keepMs: number): Promise<EtcdLease> {
    const ttl = this.lengths.holdTtlFor(keepMs);
    return this.commands.run('release', key, (options) => grantLease(this.rpc, options, ttl));
  }

  /**
   * Revokes a lease (deleting its key, if still attached) without making the caller wait, retried through
   * an outage until etcd answers (see `REVOKE_PAST_TTL_MS`) or the store closes.
   */
  revokeLater(lease: EtcdLease): void {
    const until = Date.now() + lease.ttlSeconds * 1_000 + REVOKE_PAST_TTL_MS;
    this.tasks.retry(() => this.commands.run('revoke', lease.id, (options) => revokeLease(this.rpc, options, lease.id)), until);
  }

  remember(token: string, grant: EtcdGrant): void {
    for (const swept of this.grants.add(token, grant)) for (const lease of leasesOf(swept)) this.revokeLater(lease);
  }

  /**
   * Drops a grant and revokes its lease (which takes its key along, if it is still attached), and the
   * lease an unanswered move may have put the key on.
   */
  forget(token: string, grant: EtcdGrant): void {
    this.grants.delete(token);
    for (const lease of leasesOf(grant)) this.revokeLater(lease);
  }
}
