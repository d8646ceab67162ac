import type { RenewOutcome, RenewRequest } from '../lock-store.interface.js';
import type { EtcdCommands } from './etcd-commands.js';
import { leasesOf, type EtcdGrant, type EtcdGrants } from './etcd-grants.js';
import type { EtcdRpc } from './txns/etcd-rpc.js';
import { heldKeysTxn, MAX_TXN_OPS } from './txns/held-keys.txn.js';
import { keepAliveOnce } from './txns/leases.rpc.js';

export interface RenewalHooks {
  /** Moves a grant to a lease of another length; true when the key was still ours. */
  relet(grant: EtcdGrant, leaseMs: number, sentAt: number): Promise<boolean>;
  /** Finds out where an unanswered move left the grant's key (see `settleMove`); true while it is still ours. */
  settle(grant: EtcdGrant): Promise<boolean>;
  /** The outcome to report while a move stays unsettled: unknown, or lost once that is the only safe answer. */
  unsettled(grant: EtcdGrant, error: Error): RenewOutcome;
  /** Drops a grant that turned out lost, revoking what is left of it. */
  forget(token: string, grant: EtcdGrant): void;
}

interface Entry {
  readonly index: number;
  readonly token: string;
  readonly grant: EtcdGrant;
}

/**
 * The watchdog's renewal round on etcd: one keep-alive per lease, all on one stream, then one read of the
 * holders' keys (a keep-alive cannot tell that a key was force-released while its lease lives), in
 * transactions of up to 128 keys. Each request gets its own outcome: `true`, `false` (lease or key gone:
 * the lease is lost), or the store error that left it unknown, which the watchdog retries until its own
 * deadline. Requests with a new lease length (an `extend(ms)`) move the key to a new lease instead. A
 * grant whose last move got no answer is settled first; while it cannot be, both of its leases get
 * keep-alives and its outcome stays unknown.
 */
export class EtcdRenewal {
  constructor(
    private readonly rpc: EtcdRpc,
    private readonly commands: EtcdCommands,
    private readonly grants: EtcdGrants,
    private readonly hooks: RenewalHooks,
  ) {}

  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    const sentAt = Date.now();
    const results = new Array<RenewOutcome>(requests.length);
    const keepAlive: Entry[] = [];
    const unsettled: Entry[] = [];
    const relets: Array<Promise<void>> = [];
    const settling: Array<Promise<void>> = [];
    const sort = (entry: Entry, leaseMs: number): void => {
      if (leaseMs === entry.grant.leaseMs) keepAlive.push(entry);
      else relets.push(this.relet(entry, leaseMs, sentAt, results));
    };
    requests.forEach(({ key, token, leaseMs }, index) => {
      const grant = this.grants.get(key, token);
      if (!grant) return void (results[index] = false);
      const entry = { index, token, grant };
      if (!grant.moving) return sort(entry, leaseMs);
      settling.push(
        this.settle(entry, results, unsettled).then((held) => {
          if (held) sort(entry, leaseMs);
        }),
      );
    });
    await Promise.all(settling);
    await Promise.all([this.keepAlive(keepAlive, unsettled, sentAt, results), ...relets]);
    return results;
  }

  private async settle(entry: Entry, results: RenewOutcome[], unsettled: Entry[]): Promise<boolean> {
    try {
      if (await this.hooks.settle(entry.grant)) return true;
      this.lost(entry, results);
    } catch (error) {
      const outcome = this.hooks.unsettled(entry.grant, error as Error);
      if (outcome === false) this.lost(entry, results);
      else {
        results[entry.index] = outcome;
        unsettled.push(entry);
      }
    }
    return false;
  }

  /** `unsettled` entries only get keep-alives for both their leases: their outcome stays the error they have. */
  private async keepAlive(entries: Entry[], unsettled: Entry[], sentAt: number, results: RenewOutcome[]): Promise<void> {
    if (entries.length + unsettled.length === 0) return;
    const what = describe([...entries, ...unsettled]);
    const ids = [...entries.map((e) => e.grant.leaseId), ...unsettled.flatMap((e) => leasesOf(e.grant).map((lease) => lease.id))];
    let ttls: Map<string, number>;
    try {
      ttls = await this.commands.run('renew', what, (options) => keepAliveOnce(this.rpc, options, ids));
    } catch (error) {
      for (const entry of entries) results[entry.index] = error as Error;
      return;
    }
    for (const { grant } of unsettled) {
      if (grant.moving && (ttls.get(grant.moving.id) ?? 0) > 0) grant.moving.refreshedAt = Math.max(grant.moving.refreshedAt, sentAt);
    }
    const alive: Entry[] = [];
    for (const entry of entries) {
      if ((ttls.get(entry.grant.leaseId) ?? 0) > 0) alive.push(entry);
      else this.lost(entry, results);
    }
    const chunks: Entry[][] = [];
    for (let i = 0; i < alive.length; i += MAX_TXN_OPS) chunks.push(alive.slice(i, i + MAX_TXN_OPS));
    await Promise.all(
      chunks.map(async (chunk) => {
        let held: boolean[];
        try {
          held = await this.commands.run('renew', describe(chunk), (options) =>
            heldKeysTxn(
              this.rpc,
              options,
              chunk.map(({ grant }) => ({ waiterKey: grant.waiterKey, createRevision: grant.fencingToken, leaseId: grant.leaseId })),
            ),
          );
        } catch (error) {
          for (const entry of chunk) results[entry.index] = error as Error;
          return;
        }
        chunk.forEach((entry, i) => {
          if (!held[i]) return this.lost(entry, results);
          entry.grant.refreshedAt = Math.max(entry.grant.refreshedAt, sentAt);
          results[entry.index] = true;
        });
      }),
    );
  }

  private async relet(entry: Entry, leaseMs: number, sentAt: number, results: RenewOutcome[]): Promise<void> {
    try {
      if (await this.hooks.relet(entry.grant, leaseMs, sentAt)) results[entry.index] = true;
      else this.lost(entry, results);
    } catch (error) {
      results[entry.index] = error as Error;
    }
  }

  private lost(entry: Entry, results: RenewOutcome[]): void {
    results[entry.index] = false;
    this.hooks.forget(entry.token, entry.grant);
  }
}

function describe(entries: readonly Entry[]): string {
  return entries.length === 1 ? entries[0]!.grant.key : `${entries.length} leases starting with ${entries[0]!.grant.key}`;
}
