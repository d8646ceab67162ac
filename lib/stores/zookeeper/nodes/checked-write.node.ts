import type { ZookeeperClient } from '../zookeeper-client.interface.js';
import { unavailable, type ZookeeperSession } from '../zookeeper-session.js';
import { isNodeReply, ZK } from '../zookeeper-reply.js';
import { statOf } from './contenders.query.js';

/**
 * How often a checked write reads the node again when its version moved between the read and the write.
 * Only the grant's own process writes a holder node (a permit holder's one mark, a renewal of another
 * length, a minimum hold), so a few in a row do not happen; the loop must end all the same.
 */
const MAX_VERSION_RACES = 5;

/**
 * Deletes the node at `path` if it is still the one created at `czxid` (the fencing token): a sequence
 * restarted by a re-created parent may put another contender at the same path later. The delete is
 * version-checked against the stat just read. True when this call deleted it.
 */
export function deleteIfCreatedAt(session: ZookeeperSession, operation: string, key: string, path: string, czxid: number): Promise<boolean> {
  return writeIfCreatedAt(session, operation, key, path, czxid, (client, version) => client.remove(path, version));
}

/** Sets a contender's value if it is still the one created at `czxid`; true when it was. */
export function setIfCreatedAt(session: ZookeeperSession, operation: string, key: string, path: string, czxid: number, data: string): Promise<boolean> {
  return writeIfCreatedAt(session, operation, key, path, czxid, (client, version) => client.setData(path, data, version));
}

/**
 * One write of the node created at `czxid`, at the version just read. A write of the node in between (its
 * version moved, the node the same: a permit holder's mark, say) is no reason to give up, as a different
 * node or none is: the node is read again.
 */
async function writeIfCreatedAt(
  session: ZookeeperSession,
  operation: string,
  key: string,
  path: string,
  czxid: number,
  write: (client: ZookeeperClient, version: number) => Promise<unknown>,
): Promise<boolean> {
  for (let race = 0; ; race++) {
    const stat = await statOf(session, operation, key, path);
    if (!stat || stat.czxid !== czxid) return false;
    try {
      await session.call(operation, key, (client) => write(client, stat.version));
      return true;
    } catch (error) {
      if (isNodeReply(error, ZK.NONODE)) return false;
      if (!isNodeReply(error, ZK.BADVERSION)) throw error;
      if (race >= MAX_VERSION_RACES) throw unavailable(operation, key, session.servers, `${path} changed under ${race + 1} writes in a row`);
    }
  }
}
