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
