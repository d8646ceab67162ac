import { connectStringOf, type ZookeeperConnectionOption } from './zookeeper-connection-option.js';
import { ZookeeperLockStore } from './zookeeper-lock.store.js';
import { loadZookeeper } from './zookeeper.loader.js';

export interface ZookeeperLockStoreSettings {
  readonly keyPrefix: string;
  readonly commandTimeoutMs: number;
  /** One session of this timeout for every lease up to it (see `ZookeeperSessionSettings`). @default undefined */
  readonly sessionTimeoutMs?: number;
}

/**
 * Builds the ZooKeeper store: loads `node-zookeeper-client` (only now: it is an optional peer). Sessions
 * open on first use, one per lease length.
 */
export async function createZookeeperLockStore(option: ZookeeperConnectionOption, settings: ZookeeperLockStoreSettings): Promise<ZookeeperLockStore> {
  const zookeeper = await loadZookeeper();
  return new ZookeeperLockStore(zookeeper, { ...settings, connect: connectStringOf(option) });
}
