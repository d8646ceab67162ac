/**
 * Ends a lock's name inside its etcd keys. Lock keys and key prefixes never contain control characters
 * (`assertLockKey`, option validation), so the waiters of lock `a` (`lock:a\0…`) can never be confused with
 * those of `a/b` or `ab`, and one prefix range holds exactly one lock's waiters.
 */
const SEPARATOR = '\u0000';

/** What a waiter key holds besides its name: who waits or holds, and for how long it asked. */
export interface WaiterValue {
  readonly holder: string;
  /** The lease length the holder asked for (or the minimum hold, once released with one), in ms. */
  readonly leaseMs: number;
}

/**
 * Where each etcd key of a lock lives. As in etcd's `concurrency.Mutex`, every acquisition (holder or
 * waiter) puts its own key `<keyPrefix><lock key>\0<lease id in hex>` attached to its own etcd lease; the key
 * with the lowest create revision owns the lock, and that revision is the fencing token.
 */
export class EtcdKeyLayout {
  private readonly prefixBytes: Buffer;

  constructor(private readonly keyPrefix: string) {
    this.prefixBytes = Buffer.from(keyPrefix);
  }

  /** The range holding every waiter key of one lock. */
  lockRange(key: string): { key: Buffer; range_end: Buffer } {
    const start = Buffer.from(this.keyPrefix + key + SEPARATOR);
    return { key: start, range_end: rangeEnd(start) };
  }

  /** The range holding every key of this prefix (the runbook's listing). */
  prefixRange(): { key: Buffer; range_end: Buffer } {
    return { key: this.prefixBytes, range_end: rangeEnd(this.prefixBytes) };
  }

  waiterKey(key: string, leaseId: string): Buffer {
    return Buffer.from(this.keyPrefix + key + SEPARATOR + BigInt(leaseId).toString(16).padStart(16, '0'));
  }

  /** The lock key a waiter key belongs to, or undefined for keys this layout did not write. */
  lockKeyOf(etcdKey: Buffer): string | undefined {
    const text = etcdKey.toString();
    if (!text.startsWith(this.keyPrefix)) return undefined;
    const rest = text.slice(this.keyPrefix.length);
    const at = rest.indexOf(SEPARATOR);
    if (at <= 0 || !/^[0-9a-f]{16}$/.test(rest.slice(at + 1))) return undefined;
    return rest.slice(0, at);
  }
}

export function encodeWaiterValue(value: WaiterValue): Buffer {
  return Buffer.from(JSON.stringify({ holder: value.holder, leaseMs: value.leaseMs }));
}

/** Tolerates foreign or damaged values: the key still counts (it holds its place), its details are unknown. */
export function decodeWaiterValue(value: Buffer | undefined): WaiterValue {
  try {
    const parsed = JSON.parse(value?.toString() ?? '') as Partial<WaiterValue>;
    return {
      holder: typeof parsed.holder === 'string' ? parsed.holder : '?',
      leaseMs: typeof parsed.leaseMs === 'number' ? parsed.leaseMs : Infinity,
    };
  } catch {
    return { holder: '?', leaseMs: Infinity };
  }
}

/** etcd's prefix convention: the range end is the prefix with its last byte incremented. */
function rangeEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}
