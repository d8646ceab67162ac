import { globToRegExp } from '../key-glob.js';
import type { ForceReleaseResult, HeldLock } from '../lock-store.interface.js';
import { deleteIfCreatedAt } from './nodes/checked-delete.node.js';
import { contendersOf, readContender } from './nodes/contenders.query.js';
import { ZOOKEEPER_ROOT } from './zookeeper-key-layout.js';
import { isNodeReply, ZK } from './zookeeper-reply.js';
import type { ZookeeperStoreContext } from './zookeeper-store-context.js';

interface HeldNode {
  readonly lock: HeldLock;
  readonly path: string;
}

/** How often the holder is read again when it went between listing the queue and reading its node. */
const MAX_READS = 5;

/**
 * The runbook's side of the store: who holds a key (its lowest contender), every held key of the prefix,
 * and the deliberate override that deletes the holder's node, waking the contender behind it.
 */
export class ZookeeperLockInspection {
  constructor(private readonly context: ZookeeperStoreContext) {}

  async inspect(key: string): Promise<HeldLock | null> {
    return (await this.holder(key))?.lock ?? null;
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
    const held = await Promise.all(keys.map((key) => this.inspect(key)));
    return held.filter((lock): lock is HeldLock => lock !== null).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    for (let read = 0; read < MAX_READS; read++) {
      const held = await this.holder(key);
      if (!held) return { released: false, reason: 'not-held' };
      if (fencingToken !== undefined && held.lock.fencingToken !== fencingToken) return { released: false, reason: 'fencing-mismatch', current: held.lock };
      const session = await this.context.reader();
      if (await deleteIfCreatedAt(session, 'forceRelease', key, held.path, held.lock.fencingToken)) {
        this.context.emptyParents.add(key);
        return { released: true, lock: held.lock };
      }
      // The grant this call saw ended by itself first: never take the next holder in its place.
      if (fencingToken === undefined) return { released: false, reason: 'not-held' };
    }
    return { released: false, reason: 'not-held' };
  }

  private async holder(key: string): Promise<HeldNode | null> {
    const session = await this.context.reader();
    const lockPath = this.context.layout.lockPath(key);
    for (let read = 0; read < MAX_READS; read++) {
      const [first] = await contendersOf(session, 'inspect', key, lockPath);
      if (first === undefined) return null;
      const path = `${lockPath}/${first}`;
      const node = await readContender(session, 'inspect', key, path);
      if (!node) continue;
      const { holder, leaseMs } = node.value;
      // ZooKeeper keeps no TTL per node: what the holder asked for is the most it has left.
      return { path, lock: { key, fencingToken: node.stat.czxid, ttlMs: Number.isFinite(leaseMs) ? leaseMs : -1, holder } };
    }
    return null;
  }
}
