import type { ZookeeperStat } from '../zookeeper-client.interface.js';
import type { ZookeeperSession } from '../zookeeper-session.js';
import { decodeContenderValue, sortContenders, type ContenderValue } from '../zookeeper-key-layout.js';
import { isNodeReply, ZK } from '../zookeeper-reply.js';

/** One lock's contender names in queue order, holder first; none when the lock has no parent node. */
export async function contendersOf(session: ZookeeperSession, operation: string, key: string, lockPath: string): Promise<string[]> {
  try {
    return sortContenders(await session.call(operation, key, (client) => client.getChildren(lockPath)));
  } catch (error) {
    if (isNodeReply(error, ZK.NONODE)) return [];
    throw error;
  }
}

export interface ReadNode {
  readonly stat: ZookeeperStat;
  readonly value: ContenderValue;
}

/** A contender's stat and value, or null once it is gone. */
export async function readContender(session: ZookeeperSession, operation: string, key: string, path: string): Promise<ReadNode | null> {
  try {
    const { stat, data } = await session.call(operation, key, (client) => client.getData(path));
    return { stat, value: decodeContenderValue(data) };
  } catch (error) {
    if (isNodeReply(error, ZK.NONODE)) return null;
    throw error;
  }
}

/** A node's stat, or null once it is gone. */
export async function statOf(session: ZookeeperSession, operation: string, key: string, path: string): Promise<ZookeeperStat | null> {
  return session.call(operation, key, (client) => client.exists(path));
}

/**
 * Sets a one-shot data watch on a contender's node: it fires at the node's deletion and at a write of its
 * value after the watch was set. Resolves with the node's stat as the watch was set (a write that came
 * before shows in its version, and fires nothing), or null when the node is gone already (no watch is
 * left behind then).
 */
export async function watchContender(session: ZookeeperSession, key: string, path: string, onChange: () => void): Promise<ZookeeperStat | null> {
  try {
    return (await session.call('acquire', key, (client) => client.getData(path, onChange))).stat;
  } catch (error) {
    if (isNodeReply(error, ZK.NONODE)) return null;
    throw error;
  }
}
