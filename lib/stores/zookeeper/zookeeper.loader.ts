import { loadOptionalPeer } from '../../support/optional-peer.js';
import type { NodeZookeeperClientPackage } from './client/node-zookeeper-client.types.js';

/** What the store uses of the `node-zookeeper-client` package. */
export type ZookeeperPackage = NodeZookeeperClientPackage;

/** Loads `node-zookeeper-client` (an optional peer, pure JavaScript) when the ZooKeeper store is actually built. */
export function loadZookeeper(): Promise<ZookeeperPackage> {
  return loadOptionalPeer('node-zookeeper-client', {
    option: 'store',
    value: 'zookeeper',
    isModule: (zk) => typeof (zk as { createClient?: unknown }).createClient === 'function',
  });
}
