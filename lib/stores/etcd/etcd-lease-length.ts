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
 * library's local deadline (which stays at `leaseMs` and so errs early). Under `'reject'`, a lease the
 * server stretches beyond that rounding (its minimum TTL is longer) is refused, and so is one below a
 * second. Each grant is judged by itself, never by what earlier grants taught: whether a `leaseMs` is
 * accepted depends on the value and the server, not on what the process did before (DESIGN §2.15).
 */
export class EtcdLeaseLength {
  constructor(
    private readonly policy: ShortLeasePolicy,
    private readonly endpoints: string,
  ) {}

  /** The TTL to ask for; under `'reject'`, throws for a lease shorter than etcd's one-second granularity. */
  ttlFor(leaseMs: number): number {
    if (this.policy === 'reject' && leaseMs < 1_000) throw this.tooShort(leaseMs, 1);
    return ttlSecondsFor(leaseMs);
  }

  /** A minimum hold is "at least" by nature: rounding it up is always right, and never refused. */
  holdTtlFor(keepMs: number): number {
    return ttlSecondsFor(keepMs);
  }

  /**
   * After a grant: a TTL longer than asked is the server's minimum, which would let a crashed holder block
   * the key that long. Throws (under `'reject'`); the caller gives the lease back.
   */
  granted(leaseMs: number, askedTtl: number, grantedTtl: number): void {
    if (this.policy === 'reject' && grantedTtl > askedTtl) throw this.tooShort(leaseMs, grantedTtl);
  }

  private tooShort(leaseMs: number, minTtlSeconds: number): LockConfigError {
    return new LockConfigError(
      'leaseMs',
      leaseMs,
      `at least ${minTtlSeconds * 1_000} ms with the etcd store (${this.endpoints}): etcd leases are whole ` +
        `seconds and this server grants none shorter than ${minTtlSeconds} s, so a crashed holder would ` +
        `block the key that long. Lengthen leaseMs, or build the store with shortLeases: 'round-up' to accept it`,
    );
  }
}
