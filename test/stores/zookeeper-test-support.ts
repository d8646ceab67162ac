import type { ZookeeperEnsemble, ZookeeperMember } from '../../scripts/servers/zookeeper-server';
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

/** Polls a condition the server exposes (queue length, a count), bounded and named: see pollUntil. */
export { pollUntil } from '../support/until';

/** A session id as the store and `ZookeeperStat.ephemeralOwner` write it: hex, no `0x`, no leading zeros. */
function sessionId(hex: string): string {
  return hex.replace(/^0x/, '').replace(/^0+(?=.)/, '');
}

/** The session that owns a contender's node (its ephemeral owner), or undefined once it is gone. */
export async function sessionOf({ client: observer }: ZookeeperObserver, path: string): Promise<string | undefined> {
  return (await observer.exists(path))?.ephemeralOwner;
}

/** Which nodes under `lockPath` each session watches, from the member's own table of watches (`wchp`). */
export async function watchesBySession(member: ZookeeperMember, lockPath: string): Promise<Map<string, string[]>> {
  const bySession = new Map<string, string[]>();
  for (const [path, sessions] of await member.watchesByPath()) {
    if (!path.startsWith(`${lockPath}/`)) continue;
    for (const session of sessions.map(sessionId)) bySession.set(session, [...(bySession.get(session) ?? []), path].sort());
  }
  return bySession;
}
