import { randomBytes } from 'node:crypto';
import { lockShapeName, type LockShape } from '../lock-shape.js';
import type { QueuedShape, QueueShape } from '../queue/queue-order.js';

/** What a contender node holds: who waits or holds, and for how long it asked. */
export interface ContenderValue {
  readonly holder: string;
  /** The lease length the holder asked for (or the minimum hold, once released with one), in ms. */
  readonly leaseMs: number;
}

/** The root under which every lock's parent node lives (a chroot in the connect string moves it). */
export const ZOOKEEPER_ROOT = '/nestjs-distributed-lock';

/** Contender names: `lock-<nonce>-<sequence>`; the nonce finds a node whose create got no answer. */
const CONTENDER = /^lock-([0-9a-f]+)-(\d{10})$/;

/** Random hex digits at the start of every nonce; a shaped contender's nonce goes on with its shape's tag. */
const RANDOM_DIGITS = 12;

/**
 * The tags of shaped contenders, after the nonce's random digits: `1` a reader, `2` a writer, `3<N>` a
 * permit of a semaphore of N (N in decimal). Hex digits, so a shaped contender's name keeps the plain form
 * `lock-<hex>-<sequence>`: an instance of an earlier version, which knew only plain locks, counts it as an
 * exclusive contender during a rolling upgrade and waits for it (or it for that instance), never beside
 * it. The name alone says every contender's shape and N, so one read of the children is the whole queue.
 */
const TAGS: Readonly<Record<Exclude<QueueShape, 'plain' | 'permits'>, string>> = { read: '1', write: '2' };
const PERMIT_TAG = /^3([1-9]\d*)$/;

/** How a contender queues: its shape, and a permit's N (0 for other shapes). */
export interface ContenderShape {
  readonly shape: QueueShape;
  readonly permits: number;
}

/** How a plain (exclusive) lock queues. */
export const PLAIN_CONTENDER: ContenderShape = { shape: 'plain', permits: 0 };

/** How a grant of `shape` queues. */
export function contenderShape(shape: LockShape): ContenderShape {
  return { shape: lockShapeName(shape), permits: shape.permits ?? 0 };
}

/**
 * Where each node of a lock lives. As in Curator's InterProcessMutex, every acquisition (holder or waiter)
 * creates its own ephemeral sequential node under the lock's parent `<root>/<encoded keyPrefix + key>`;
 * the lowest sequence holds. The parent is persistent; the store deletes it once it is empty.
 */
export class ZookeeperKeyLayout {
  constructor(private readonly keyPrefix: string) {}

  /** The parent of one lock's contenders. */
  lockPath(key: string): string {
    return `${ZOOKEEPER_ROOT}/${encodeNodeName(this.keyPrefix + key)}`;
  }

  /** The prefix a contender's name starts with, before the sequence ZooKeeper appends. */
  contenderPrefix(key: string, nonce: string): string {
    return `${this.lockPath(key)}/lock-${nonce}-`;
  }

  /** The user's key of a lock parent's name, or undefined when it is not of this prefix. */
  keyOf(name: string): string | undefined {
    let decoded: string;
    try {
      decoded = decodeURIComponent(name);
    } catch {
      return undefined;
    }
    return decoded.startsWith(this.keyPrefix) ? decoded.slice(this.keyPrefix.length) : undefined;
  }
}

/** A node name for any string: no `/`, never `.` or `..`, only printable ASCII (ZooKeeper refuses the rest). */
export function encodeNodeName(value: string): string {
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

/** The contender names of one lock in queue order (lowest sequence first); other children are skipped. */
export function sortContenders(children: readonly string[]): string[] {
  return children.filter((name) => CONTENDER.test(name)).sort((a, b) => sequenceOf(a) - sequenceOf(b));
}

export function sequenceOf(name: string): number {
  return Number(CONTENDER.exec(name)?.[2] ?? Number.NaN);
}

export function nonceOf(name: string): string | undefined {
  return CONTENDER.exec(name)?.[1];
}

/** A fresh nonce for one acquisition: random, then the tag of its shape (none for a plain lock). */
export function newNonce({ shape, permits }: ContenderShape): string {
  const random = randomBytes(RANDOM_DIGITS / 2).toString('hex');
  if (shape === 'plain') return random;
  return random + (shape === 'permits' ? `3${permits}` : TAGS[shape]);
}

/**
 * A contender's shape, from its name. A name without a tag (a plain lock, or one written by an earlier
 * version) or with one this version does not know counts as plain: exclusive, it holds its place.
 */
export function contenderShapeOf(name: string): ContenderShape {
  const tag = nonceOf(name)?.slice(RANDOM_DIGITS) ?? '';
  if (tag === TAGS.read) return { shape: 'read', permits: 0 };
  if (tag === TAGS.write) return { shape: 'write', permits: 0 };
  const permits = PERMIT_TAG.exec(tag)?.[1];
  return permits !== undefined && Number.isSafeInteger(Number(permits)) ? { shape: 'permits', permits: Number(permits) } : PLAIN_CONTENDER;
}

/** One lock's contenders in queue order, as the admission rule reads them, each named by its path. */
export function queueEntriesOf(lockPath: string, names: readonly string[]): Array<QueuedShape<string>> {
  return names.map((name) => ({ key: `${lockPath}/${name}`, ...contenderShapeOf(name) }));
}

export function encodeContenderValue(value: ContenderValue): string {
  return JSON.stringify(value);
}

/** A node written by something else reads as a holder of unknown name and length. */
export function decodeContenderValue(data: Buffer | string | null | undefined): ContenderValue {
  try {
    const parsed = JSON.parse(String(data ?? '')) as Partial<ContenderValue>;
    return { holder: String(parsed.holder ?? '?'), leaseMs: Number(parsed.leaseMs ?? Number.NaN) };
  } catch {
    return { holder: '?', leaseMs: Number.NaN };
  }
}
