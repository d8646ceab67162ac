import { encodeWaiterValue } from './etcd-key-layout.js';

/** An etcd lease the store granted. */
export interface EtcdLease {
  readonly id: string;
  readonly ttlSeconds: number;
}

/**
 * A move of a grant's key to another lease (`extend` to a new length) whose answer never came: the key is
 * on the grant's lease or on this one, and until the store has found out which, neither is revoked.
 */
export interface EtcdPendingMove extends EtcdLease {
  /** The length the move asked for, which the grant takes on if the key turns out to be on this lease. */
  readonly leaseMs: number;
  /** Local time the lease's grant (or its last keep-alive that got through) was sent: it runs at least `leaseMs` from then. */
  refreshedAt: number;
}

/** What the store remembers of a lease it granted (holder or waiter that became holder). */
export interface EtcdGrant {
  readonly key: string;
  readonly waiterKey: Buffer;
  /** The key's create revision: the fencing token, and what every token-checked transaction compares. */
  readonly fencingToken: number;
  readonly holder: string;
  /**
   * A semaphore's N, kept in the key's value wherever the key moves (a new lease length, a minimum hold):
   * the permit keys behind it are admitted by it. Absent for every other shape.
   */
  readonly permits?: number;
  /** The etcd lease the key is attached to; changes when the lease length changes. */
  leaseId: string;
  ttlSeconds: number;
  leaseMs: number;
  /** Local time the last grant or keep-alive that got through was sent. */
  refreshedAt: number;
  /** Set while a move to another lease has an unknown outcome (see `settleMove`). */
  moving?: EtcdPendingMove;
}

/** The value of the grant's key when it moves to a lease of `leaseMs` (its holder, the length, a semaphore's N). */
export function grantValue(grant: EtcdGrant, leaseMs: number): Buffer {
  return encodeWaiterValue({ holder: grant.holder, leaseMs, permits: grant.permits });
}

/** Every lease the grant's key may be attached to: its own, and the one an unanswered move may have put it on. */
export function leasesOf(grant: EtcdGrant): EtcdLease[] {
  const own = { id: grant.leaseId, ttlSeconds: grant.ttlSeconds };
  return grant.moving ? [own, grant.moving] : [own];
}

/** Forgotten once the etcd lease has surely run out: twice its TTL without a keep-alive. */
const FORGET_AFTER_TTLS = 2;
const SWEEP_EVERY = 256;

/**
 * Ownership tokens of this store's live grants, each with its waiter key and etcd lease. The token never
 * goes to etcd (keys and values are readable by anyone who may list locks): a grant is identified there by
 * its key and create revision, which only this process knows belong to the token. Grants whose lease
 * surely ran out (the holder never released, and nobody renewed) are swept, so memory stays bounded.
 */
export class EtcdGrants {
  private readonly byToken = new Map<string, EtcdGrant>();
  private added = 0;

  /** The grant `token` holds on `key`, if any. */
  get(key: string, token: string): EtcdGrant | undefined {
    const grant = this.byToken.get(token);
    return grant?.key === key ? grant : undefined;
  }

  /** Adds a grant; every so often returns the grants it swept, whose leases the caller may revoke. */
  add(token: string, grant: EtcdGrant): EtcdGrant[] {
    this.byToken.set(token, grant);
    return ++this.added % SWEEP_EVERY === 0 ? this.sweep(Date.now()) : [];
  }

  delete(token: string): void {
    this.byToken.delete(token);
  }

  get size(): number {
    return this.byToken.size;
  }

  private sweep(now: number): EtcdGrant[] {
    const swept: EtcdGrant[] = [];
    for (const [token, grant] of this.byToken) {
      const lastSign = Math.max(grant.refreshedAt, grant.moving?.refreshedAt ?? 0);
      const longestTtl = Math.max(grant.ttlSeconds, grant.moving?.ttlSeconds ?? 0);
      if (now - lastSign > FORGET_AFTER_TTLS * longestTtl * 1_000) {
        this.byToken.delete(token);
        swept.push(grant);
      }
    }
    return swept;
  }
}
