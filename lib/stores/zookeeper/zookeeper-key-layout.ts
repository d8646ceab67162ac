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
