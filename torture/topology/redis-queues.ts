import type { Cluster, Redis } from 'ioredis';
import type { QueueSample } from '../history/records';
import { parseQueue, queueUserKey } from './topology';

/** The two lines a key's waiters stand in with `fair: true`: plain locks', and readers', writers' and permits'. */
const LINES = [
  { mark: '#queue:', shaped: false },
  { mark: '#shared-queue:', shaped: true },
] as const;

/**
 * Every fair-queue list under `prefix` on one node (`SCAN` for `<prefix>#queue:*` and
 * `<prefix>#shared-queue:*`, then `LRANGE`): read behind the library's back, as an operator would, to
 * find queues whose waiters are all gone.
 */
export async function scanNodeQueues(node: Redis, prefix: string): Promise<QueueSample[]> {
  const found: QueueSample[] = [];
  for (const { mark, shaped } of LINES) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}${mark}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) found.push(parseQueue(queueUserKey(prefix, mark, key), await node.lrange(key, 0, -1), shaped));
    } while (cursor !== '0');
  }
  return found;
}

/** The same over every master of a Cluster. */
export async function scanClusterQueues(cluster: Cluster, prefix: string): Promise<QueueSample[]> {
  const perNode = await Promise.all(cluster.nodes('master').map((node) => scanNodeQueues(node, prefix)));
  return perNode.flat();
}
