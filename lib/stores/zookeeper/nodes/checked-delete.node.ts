import type { ZookeeperSession } from '../zookeeper-session.js';
import { isNodeReply, ZK } from '../zookeeper-reply.js';
import { statOf } from './contenders.query.js';

/**
 * Deletes the node at `path` if it is still the one created at `czxid` (the fencing token): a sequence
 * restarted by a re-created parent may put another contender at the same path later. The delete is
 * version-checked against the stat just read. True when this call deleted it.
 */
export async function deleteIfCreatedAt(session: ZookeeperSession, operation: string, key: string, path: string, czxid: number): Promise<boolean> {
  const stat = await statOf(session, operation, key, path);
  if (!stat || stat.czxid !== czxid) return false;
  try {
    await session.call(operation, key, (client) => client.remove(path, stat.version));
    return true;
  } catch (error) {
    if (isNodeReply(error, ZK.NONODE) || isNodeReply(error, ZK.BADVERSION)) return false;
    throw error;
  }
}

/** Sets a contender's value if it is still the one created at `czxid`; true when it was. */
export async function setIfCreatedAt(session: ZookeeperSession, operation: string, key: string, path: string, czxid: number, data: string): Promise<boolean> {
  const stat = await statOf(session, operation, key, path);
  if (!stat || stat.czxid !== czxid) return false;
  try {
    await session.call(operation, key, (client) => client.setData(path, data, stat.version));
    return true;
  } catch (error) {
    if (isNodeReply(error, ZK.NONODE) || isNodeReply(error, ZK.BADVERSION)) return false;
    throw error;
  }
}
