import { loadOptionalPeer } from '../../support/optional-peer.js';
import type { ZookeeperClient } from './zookeeper-client.interface.js';

/** What the store uses of the `zookeeper` package: its promise client class and its constants. */
export interface ZookeeperPackage {
  new (config: Record<string, unknown>): ZookeeperClient;
  readonly constants: Readonly<Record<string, number>>;
}

/** Loads the `zookeeper` package (an optional peer, a native addon) when the ZooKeeper store is actually built. */
export function loadZookeeper(): Promise<ZookeeperPackage> {
  return loadOptionalPeer('zookeeper', {
    option: 'store',
    value: 'zookeeper',
    isModule: (zk) => typeof zk === 'function' && typeof (zk as { constants?: unknown }).constants === 'object',
  });
}
