import { LockConfigError } from '../../errors/lock-config.error.js';

/**
 * What a `leaseMs` shorter than etcd can grant gets. etcd leases are whole seconds, and a server grants
 * none shorter than its minimum (1.5 election timeouts rounded up: 2 s on a stock server), so a crashed
 * holder of a 500 ms lease would block its key for 2 s. `'reject'` refuses such a lease with a
 * `LockConfigError` naming the minimum; `'round-up'` grants the longer etcd lease and keeps the library's
 * own deadline at `leaseMs` (a live holder still gives the key back on time; a crashed one blocks it for
 * the etcd lease).
 */
export type ShortLeasePolicy = 'reject' | 'round-up';

/** etcd TTLs are whole seconds; no lease is shorter than one. */
export function ttlSecondsFor(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1_000));
}

/**
 * A holder's remaining time as the library can know it: what etcd's lease has left (reported in whole
 * seconds, rounded down, so the true value lies within the next second) and no more than the length the
 * holder asked for, after which a live holder gives the key back itself.
 */
export function remainingMs(etcdTtlSeconds: number, leaseMs: number): number {
  if (etcdTtlSeconds < 0) return 0;
  return Math.min(leaseMs, (etcdTtlSeconds + 1) * 1_000 - 1);
}

/**
 * Maps `leaseMs` to etcd lease TTLs: rounded up to whole seconds, so the etcd lease never ends before the
 * library's local deadline (which stays at `leaseMs` and so errs early). Learns the server's minimum TTL
 * from grants that came back longer than asked.
 */
export class EtcdLeaseLength {
  private minTtlSeconds = 1;

  constructor(
    private readonly policy: ShortLeasePolicy,
    private readonly endpoints: string,
  ) {}

  /** The TTL to ask for; under `'reject'`, throws for a lease shorter than the server grants. */
  ttlFor(leaseMs: number): number {
    this.check(leaseMs);
    return ttlSecondsFor(leaseMs);
  }

  /** A minimum hold is "at least" by nature: rounding it up is always right, and never refused. */
  holdTtlFor(keepMs: number): number {
    return ttlSecondsFor(keepMs);
  }

  /**
   * After a grant: a TTL longer than asked is the server's minimum. Throws (under `'reject'`) when that
   * makes `leaseMs` too short; the caller gives the lease back.
   */
  granted(leaseMs: number, askedTtl: number, grantedTtl: number): void {
    if (grantedTtl > askedTtl) this.minTtlSeconds = Math.max(this.minTtlSeconds, grantedTtl);
    this.check(leaseMs);
  }

  private check(leaseMs: number): void {
    if (this.policy === 'reject' && leaseMs < this.minTtlSeconds * 1_000) {
      throw new LockConfigError(
        'leaseMs',
        leaseMs,
        `at least ${this.minTtlSeconds * 1_000} ms with the etcd store (${this.endpoints}): etcd leases are whole ` +
          `seconds and this server grants none shorter than ${this.minTtlSeconds} s, so a crashed holder would ` +
          `block the key that long. Lengthen leaseMs, or build the store with shortLeases: 'round-up' to accept it`,
      );
    }
  }
}
