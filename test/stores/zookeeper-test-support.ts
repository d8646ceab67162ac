import type { ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { ZookeeperConnection } from '../../lib/stores/zookeeper/client/zookeeper-connection';
import type { ZookeeperClient } from '../../lib/stores/zookeeper/zookeeper-client.interface';
import { loadZookeeper } from '../../lib/stores/zookeeper/zookeeper.loader';
import { decodeContenderValue, sortContenders, ZookeeperKeyLayout } from '../../lib/stores/zookeeper/zookeeper-key-layout';

/** A ZooKeeper client of its own for looking at what the store wrote (never for taking locks). */
export interface ZookeeperObserver {
  readonly client: ZookeeperClient;
  close(): Promise<void>;
}

export async function openObserver(ensemble: ZookeeperEnsemble): Promise<ZookeeperObserver> {
  const connection = await ZookeeperConnection.open(await loadZookeeper(), ensemble.connect, 10_000, 10_000);
  return { client: connection.client, close: () => connection.close() };
}

/** The contenders of one lock, in queue order (holder first): their paths and the holder name each carries. */
export async function queueOf({ client: observer }: ZookeeperObserver, keyPrefix: string, key: string): Promise<Array<{ path: string; holder: string }>> {
  const lockPath = new ZookeeperKeyLayout(keyPrefix).lockPath(key);
  const names = sortContenders(await observer.getChildren(lockPath).catch(() => [] as string[]));
  const entries = await Promise.all(
    names.map(async (name) => {
      const path = `${lockPath}/${name}`;
      const read = await observer.getData(path).catch(() => undefined);
      return read && { path, holder: decodeContenderValue(read.data).holder };
    }),
  );
  return entries.filter((entry): entry is { path: string; holder: string } => entry !== undefined);
}

/** Polls a condition that ZooKeeper exposes (queue length, watches), not a guessed sleep. */
export async function until(condition: () => Promise<boolean>, what: string, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
