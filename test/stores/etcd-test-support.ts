import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../scripts/servers/etcd-server';
import { EtcdKeyLayout } from '../../lib/stores/etcd/etcd-key-layout';

/** A plain etcd3 client for looking at what the store wrote (never for taking locks). */
export function openObserver(cluster: EtcdCluster): Etcd3 {
  return new Etcd3({ hosts: cluster.endpoints });
}

/** The waiter keys of one lock, in queue order (holder first), with the holder name each one carries. */
export async function queueOf(observer: Etcd3, keyPrefix: string, key: string): Promise<Array<{ holder: string; createRevision: number }>> {
  const { key: start, range_end } = new EtcdKeyLayout(keyPrefix).lockRange(key);
  const reply = await observer.kv.range({ key: start, range_end, sort_order: 'Ascend', sort_target: 'Create' });
  return reply.kvs.map((kv) => ({
    holder: (JSON.parse(kv.value.toString()) as { holder: string }).holder,
    createRevision: Number(kv.create_revision),
  }));
}

/** Polls a condition that etcd exposes (queue length, a metric), not a guessed sleep. */
export async function until(condition: () => Promise<boolean>, what: string, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
