import type { ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import type { ZookeeperClient } from '../../lib/stores/zookeeper/zookeeper-client.interface';
import { loadZookeeper } from '../../lib/stores/zookeeper/zookeeper.loader';
import { decodeContenderValue, sortContenders, ZookeeperKeyLayout } from '../../lib/stores/zookeeper/zookeeper-key-layout';

/** A plain ZooKeeper client for looking at what the store wrote (never for taking locks). */
export async function openObserver(ensemble: ZookeeperEnsemble): Promise<ZookeeperClient> {
  const ZooKeeper = await loadZookeeper();
  const client = new ZooKeeper({ connect: ensemble.connect, timeout: 10_000, debug_level: 0 });
  await new Promise<void>((resolve) => {
    client.on('connect', () => resolve());
    client.init({});
  });
  return client;
}

/** The contenders of one lock, in queue order (holder first): their paths and the holder name each carries. */
export async function queueOf(observer: ZookeeperClient, keyPrefix: string, key: string): Promise<Array<{ path: string; holder: string }>> {
  const lockPath = new ZookeeperKeyLayout(keyPrefix).lockPath(key);
  const names = sortContenders(await observer.get_children(lockPath, false).catch(() => [] as string[]));
  const entries = await Promise.all(
    names.map(async (name) => {
      const path = `${lockPath}/${name}`;
      const read = await observer.get(path, false).catch(() => undefined);
      return read && { path, holder: decodeContenderValue(read[1]).holder };
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
