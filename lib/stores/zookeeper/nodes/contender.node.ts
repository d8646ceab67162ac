import type { ZookeeperSession } from '../zookeeper-session.js';
import { CREATE, isNodeReply, ZK } from '../zookeeper-reply.js';
import { unavailable } from '../zookeeper-session.js';
import { ensureLockParent } from './lock-parent.node.js';

/**
 * How often a contender is created again after its lock's parent vanished under it. Each time means
 * another process released the lock and found the parent empty between this one's two calls: a few in a
 * row is already unlikely, and the loop must end.
 */
const MAX_PARENT_RETRIES = 5;

/**
 * Creates one contender: an ephemeral sequential node `<prefix><sequence>` on the session (the session is
 * its lease). The lock's parent is created on demand, and again when a releasing process deleted it,
 * empty, between two calls (NO_NODE on the contender's create). Resolves with the node's full path.
 */
export async function createContender(session: ZookeeperSession, key: string, prefix: string, data: string): Promise<string> {
  const lockPath = prefix.slice(0, prefix.lastIndexOf('/'));
  for (let attempt = 0; ; attempt++) {
    try {
      return await session.call('acquire', key, (client) => client.create(prefix, data, CREATE.EPHEMERAL_SEQUENTIAL));
    } catch (error) {
      if (!isNodeReply(error, ZK.NONODE)) throw error;
      if (attempt >= MAX_PARENT_RETRIES) throw unavailable('acquire', key, session.servers, `the lock's parent node ${lockPath} vanished ${attempt + 1} times in a row`);
    }
    await ensureLockParent(session, key, lockPath);
  }
}

/**
 * Deletes one contender's node by its path: its name carries its acquisition's random nonce, so no other
 * grant's node is ever at that path (not even after a re-created parent restarted the sequence). True
 * when this call deleted it, false when it was gone already.
 */
export async function removeContender(session: ZookeeperSession, operation: string, key: string, path: string): Promise<boolean> {
  try {
    await session.call(operation, key, (client) => client.remove(path, -1));
    return true;
  } catch (error) {
    if (isNodeReply(error, ZK.NONODE)) return false;
    throw error;
  }
}

/**
 * A granted permit contender's mark: its node written once with the value it was created with, which
 * fires the data watch of the contender right behind it. Only at version 0: a node written before (a
 * renewal of another length, a minimum hold, this mark landed unseen) fired that watch already, and the
 * write is refused; a node gone fired it too. Either is done; only an unknown outcome rejects.
 */
export async function markContender(session: ZookeeperSession, key: string, path: string, value: string): Promise<void> {
  try {
    await session.call('acquire', key, (client) => client.setData(path, value, 0));
  } catch (error) {
    if (isNodeReply(error, ZK.BADVERSION) || isNodeReply(error, ZK.NONODE)) return;
    throw error;
  }
}
