import { globToRegExp } from '../key-glob.js';
import type { ForceReleaseResult, HeldLock } from '../lock-store.interface.js';
import { holdingCount } from '../queue/queue-order.js';
import { deleteIfCreatedAt } from './nodes/checked-write.node.js';
import { contendersOf, readContender } from './nodes/contenders.query.js';
import { queueEntriesOf, ZOOKEEPER_ROOT } from './zookeeper-key-layout.js';
import { isNodeReply, ZK } from './zookeeper-reply.js';
import type { ZookeeperStoreContext } from './zookeeper-store-context.js';

interface HeldNode {
  readonly lock: HeldLock;
  readonly path: string;
}

/** How often the holders are read again when one went between listing the queue and reading its node. */
const MAX_READS = 5;

/**
 * The runbook's side of the store. A lock is held by the front of its queue (queue/queue-order.ts): one
 * plain holder or writer, or every reader or permit holder, each listed on its own line with its shape,
 * fencing token and TTL; waiters are not listed. The deliberate override deletes holder nodes, which
 * wakes the contenders waiting for them.
 */
export class ZookeeperLockInspection {
  constructor(private readonly context: ZookeeperStoreContext) {}

  /** The first holder (the front of the queue always holds). */
  async inspect(key: string): Promise<HeldLock | null> {
    return (await this.holders(key, 1))[0]?.lock ?? null;
  }

  async list(match: string): Promise<HeldLock[]> {
    const session = await this.context.reader();
    let names: string[];
    try {
      names = await session.call('list', match, (client) => client.getChildren(ZOOKEEPER_ROOT));
    } catch (error) {
      if (isNodeReply(error, ZK.NONODE)) return [];
      throw error;
    }
    const pattern = globToRegExp(match);
    const keys = names.map((name) => this.context.layout.keyOf(name)).filter((key): key is string => key !== undefined && pattern.test(key));
    const held = await Promise.all(keys.map((key) => this.holders(key)));
    // Stable: the holders of one key stay in queue order.
    return held.flat().map(({ lock }) => lock).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * Takes holds away by deleting their nodes, each only if it is still the one created at its fencing
   * token (czxid). With `fencingToken`, only the hold created at it, so a holder that took over after the
   * operator looked is never the one removed. Without one, every hold this call sees (the one plain holder
   * or writer; every reader or permit holder): a hold that ends on its own meanwhile is not counted, and
   * no later holder is taken in its place.
   */
  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    if (fencingToken === undefined) {
      let first: HeldLock | undefined;
      for (const held of await this.holders(key)) {
        if (await this.take(key, held)) first ??= held.lock;
      }
      return first ? { released: true, lock: first } : { released: false, reason: 'not-held' };
    }
    for (let read = 0; read < MAX_READS; read++) {
      const holders = await this.holders(key);
      const target = holders.find((held) => held.lock.fencingToken === fencingToken);
      if (!target) return holders[0] ? { released: false, reason: 'fencing-mismatch', current: holders[0].lock } : { released: false, reason: 'not-held' };
      if (await this.take(key, target)) return { released: true, lock: target.lock };
    }
    return { released: false, reason: 'not-held' };
  }

  private async take(key: string, held: HeldNode): Promise<boolean> {
    const taken = await deleteIfCreatedAt(await this.context.reader(), 'forceRelease', key, held.path, held.lock.fencingToken);
    if (taken) this.context.emptyParents.add(key);
    return taken;
  }

  /** The holders of `key` in queue order (at most `limit`), each with its node. */
  private async holders(key: string, limit = Number.POSITIVE_INFINITY): Promise<HeldNode[]> {
    const session = await this.context.reader();
    const lockPath = this.context.layout.lockPath(key);
    let found: HeldNode[] = [];
    for (let read = 0; read < MAX_READS; read++) {
      const entries = queueEntriesOf(lockPath, await contendersOf(session, 'inspect', key, lockPath));
      const front = entries.slice(0, Math.min(limit, holdingCount(entries)));
      const nodes = await Promise.all(front.map((entry) => readContender(session, 'inspect', key, entry.key)));
      found = [];
      front.forEach(({ key: path, shape }, i) => {
        const node = nodes[i];
        if (!node) return;
        const { holder, leaseMs } = node.value;
        // ZooKeeper keeps no TTL per node: what the holder asked for is the most it has left.
        const ttlMs = Number.isFinite(leaseMs) ? leaseMs : -1;
        found.push({ path, lock: { key, fencingToken: node.stat.czxid, ttlMs, holder, ...(shape === 'plain' ? {} : { shape }) } });
      });
      // A holder that went between the two reads may have let others in: read the queue again.
      if (found.length === front.length) break;
    }
    return found;
  }
}
