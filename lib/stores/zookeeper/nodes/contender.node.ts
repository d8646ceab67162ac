import type { ZookeeperSession } from '../zookeeper-session.js';
import { ZOOKEEPER_ROOT } from '../zookeeper-key-layout.js';
import { CREATE, isNodeReply, ZK } from '../zookeeper-reply.js';

/**
 * Creates one contender: an ephemeral sequential node `<prefix><sequence>` on the session (the session is
 * its lease). The lock's parent is a container node, created on demand (and again if the ensemble
 * deleted it, empty, between two calls); the root is persistent. Resolves with the node's full path.
 */
export async function createContender(session: ZookeeperSession, key: string, prefix: string, data: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await session.call('acquire', key, (client) => client.create(prefix, data, CREATE.EPHEMERAL_SEQUENTIAL));
    } catch (error) {
      if (!isNodeReply(error, ZK.NONODE) || attempt >= 3) throw error;
    }
    await ensureNode(session, key, ZOOKEEPER_ROOT, CREATE.PERSISTENT);
    await ensureNode(session, key, prefix.slice(0, prefix.lastIndexOf('/')), CREATE.CONTAINER);
  }
}

/** Creates `path` unless it exists. */
export async function ensureNode(session: ZookeeperSession, key: string, path: string, flags: number): Promise<void> {
  try {
    await session.call('acquire', key, (client) => client.create(path, '', flags));
  } catch (error) {
    if (!isNodeReply(error, ZK.NODEEXISTS)) throw error;
  }
}
