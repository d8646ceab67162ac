import type { LockShapeName } from '../lock-shape.js';
import type { QueueShape } from '../queue/queue-order.js';

/**
 * Ends a lock's name inside its etcd keys. Lock keys and key prefixes never contain control characters
 * (`assertLockKey`, option validation), so the waiters of lock `a` (`lock:a\0…`) can never be confused with
 * those of `a/b` or `ab`, and one prefix range holds exactly one lock's waiters.
 */
const SEPARATOR = '\u0000';

/**
 * The letter of a shaped queue key. A plain key is named by its lease alone (as before shapes existed); a
 * shaped one carries a letter before the lease. The letters sort after every hex digit and in this order
 * (`p` < `r` < `w`), so every key that is not a reader's lies in two ranges around the readers' (see
 * `nonReaderRanges`).
 */
const LETTERS: Readonly<Record<LockShapeName, string>> = { permits: 'p', read: 'r', write: 'w' };
const SHAPES: Readonly<Record<string, LockShapeName>> = { p: 'permits', r: 'read', w: 'write' };
const NAME = /^([prw]?)([0-9a-f]{16})$/;

/** What a waiter key holds besides its name: who waits or holds, and for how long it asked. */
export interface WaiterValue {
  readonly holder: string;
  /** The lease length the holder asked for (or the minimum hold, once released with one), in ms. */
  readonly leaseMs: number;
  /** A semaphore's N as its holder asked for it: later permit keys are admitted by it (see queue/queue-order.ts). */
  readonly permits?: number;
}

/** A key of this layout, read back: the lock it queues for and the shape it was written for. */
export interface ParsedKey {
  readonly key: string;
  readonly shape: QueueShape;
}

/**
 * Where each etcd key of a lock lives. As in etcd's `concurrency.Mutex`, every acquisition (holder or
 * waiter) puts its own key `<keyPrefix><lock key>\0<shape letter?><lease id in hex>` attached to its own etcd
 * lease; the queue is ordered by create revision, and a grant's create revision is its fencing token.
 */
export class EtcdKeyLayout {
  private readonly prefixBytes: Buffer;

  constructor(private readonly keyPrefix: string) {
    this.prefixBytes = Buffer.from(keyPrefix);
  }

  /** The range holding every waiter key of one lock, of every shape. */
  lockRange(key: string): { key: Buffer; range_end: Buffer } {
    const start = Buffer.from(this.keyPrefix + key + SEPARATOR);
    return { key: start, range_end: rangeEnd(start) };
  }

  /**
   * The two ranges of one lock that hold every key but the readers': plain and permit keys below the
   * readers' letter, writers' above it. A reader's single attempt is granted when both are empty.
   */
  nonReaderRanges(key: string): Array<{ key: Buffer; range_end: Buffer }> {
    return this.apart(key, 'read').others;
  }

  /**
   * Where a waiter of `shape` looks for what keeps it out (see `queueWait`): `blocking`, the ranges of
   * the keys it cannot share the lock with (the whole lock for a plain key or a writer; every key but the
   * readers' for a reader, but the permit keys' for a permit key); `sharing`, for a permit key, the range
   * of the permit keys, whose count and N decide its turn.
   */
  waitRanges(key: string, shape: QueueShape): { blocking: Array<{ key: Buffer; range_end: Buffer }>; sharing?: { key: Buffer; range_end: Buffer } } {
    if (shape === 'plain' || shape === 'write') return { blocking: [this.lockRange(key)] };
    const { others, own } = this.apart(key, shape);
    return shape === 'read' ? { blocking: others } : { blocking: others, sharing: own };
  }

  /**
   * The range of the keys of one shape of a lock and, in two ranges around it, every other key of the lock
   * (plain keys carry no letter and sort before every letter).
   */
  private apart(key: string, shape: LockShapeName): { own: { key: Buffer; range_end: Buffer }; others: Array<{ key: Buffer; range_end: Buffer }> } {
    const lock = this.lockRange(key);
    const start = Buffer.from(this.keyPrefix + key + SEPARATOR + LETTERS[shape]);
    const own = { key: start, range_end: rangeEnd(start) };
    return { own, others: [{ key: lock.key, range_end: own.key }, { key: own.range_end, range_end: lock.range_end }] };
  }

  /** The range holding every key of this prefix (the runbook's listing). */
  prefixRange(): { key: Buffer; range_end: Buffer } {
    return { key: this.prefixBytes, range_end: rangeEnd(this.prefixBytes) };
  }

  waiterKey(key: string, leaseId: string, shape: QueueShape = 'plain'): Buffer {
    const letter = shape === 'plain' ? '' : LETTERS[shape];
    return Buffer.from(this.keyPrefix + key + SEPARATOR + letter + BigInt(leaseId).toString(16).padStart(16, '0'));
  }

  /** The lock key and shape of a waiter key, or undefined for keys this layout did not write. */
  parse(etcdKey: Buffer): ParsedKey | undefined {
    const text = etcdKey.toString();
    if (!text.startsWith(this.keyPrefix)) return undefined;
    const rest = text.slice(this.keyPrefix.length);
    const at = rest.indexOf(SEPARATOR);
    const name = at > 0 ? NAME.exec(rest.slice(at + 1)) : null;
    if (!name) return undefined;
    return { key: rest.slice(0, at), shape: name[1] ? SHAPES[name[1]]! : 'plain' };
  }

  /** The lock key a waiter key belongs to, or undefined for keys this layout did not write. */
  lockKeyOf(etcdKey: Buffer): string | undefined {
    return this.parse(etcdKey)?.key;
  }
}

export function encodeWaiterValue(value: WaiterValue): Buffer {
  const permits = value.permits === undefined ? {} : { permits: value.permits };
  return Buffer.from(JSON.stringify({ holder: value.holder, leaseMs: value.leaseMs, ...permits }));
}

/** Tolerates foreign or damaged values: the key still counts (it holds its place), its details are unknown. */
export function decodeWaiterValue(value: Buffer | undefined): WaiterValue {
  try {
    const parsed = JSON.parse(value?.toString() ?? '') as Partial<WaiterValue>;
    const permits = typeof parsed.permits === 'number' ? { permits: parsed.permits } : {};
    return {
      holder: typeof parsed.holder === 'string' ? parsed.holder : '?',
      leaseMs: typeof parsed.leaseMs === 'number' ? parsed.leaseMs : Infinity,
      ...permits,
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
