import type { ZookeeperSession } from '../zookeeper-session.js';
import { ZOOKEEPER_ROOT } from '../zookeeper-key-layout.js';
import { CREATE, isNodeReply, ZK } from '../zookeeper-reply.js';

/**
 * A lock's parent node (`<root>/<encoded key>`), under which its contenders queue. The client has no
 * container nodes (which the server deletes once empty), so the parent is persistent, created on demand,
 * and deleted by the store when it is left empty after a release or a give-up: a million distinct keys
 * leave no million parents behind. Re-creating a parent is safe: the fencing token is a contender's
 * czxid, which rises with every write of the ensemble, not its sequence suffix (which restarts).
 */
export async function ensureLockParent(session: ZookeeperSession, key: string, lockPath: string): Promise<void> {
  try {
    await ensureNode(session, key, lockPath);
  } catch (error) {
    // The root is created once per ensemble and never deleted: asked for only when the parent cannot be.
    if (!isNodeReply(error, ZK.NONODE)) throw error;
    await ensureNode(session, key, ZOOKEEPER_ROOT);
    await ensureNode(session, key, lockPath);
  }
}

/**
 * Deletes the lock's parent if it has no child left. A contender that joins at that moment either lands
 * first (the delete is refused: NOT_EMPTY) or finds the parent gone and creates it again
 * (`createContender`); a parent someone else deleted first is NO_NODE. Either is fine.
 */
export async function removeLockParentIfEmpty(session: ZookeeperSession, key: string, lockPath: string): Promise<void> {
  try {
    await session.call('release', key, (client) => client.remove(lockPath, -1));
  } catch (error) {
    if (!isNodeReply(error, ZK.NOTEMPTY) && !isNodeReply(error, ZK.NONODE)) throw error;
  }
}

/** Creates the persistent node `path` unless it exists. */
async function ensureNode(session: ZookeeperSession, key: string, path: string): Promise<void> {
  try {
    await session.call('acquire', key, (client) => client.create(path, '', CREATE.PERSISTENT));
  } catch (error) {
    if (!isNodeReply(error, ZK.NODEEXISTS)) throw error;
  }
}
