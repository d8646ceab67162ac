import type { QueuedShape, QueueWait as SharedQueueWait } from '../queue/queue-order.js';
import { decodeWaiterValue, type EtcdKeyLayout } from './etcd-key-layout.js';
import { revision, type KeyValue } from './txns/etcd-rpc.js';

/**
 * One key of a lock's queue, as the admission rule reads it (`lib/stores/queue/queue-order.ts`, the rule
 * etcd and ZooKeeper share). A permit key's N rides in its value: 1 when the value is damaged.
 */
export interface QueueEntry extends QueuedShape<Buffer> {
  readonly createRevision: number;
}

/** What a waiter of etcd's queue waits for: a key, or the holders' keys. */
export type QueueWait = SharedQueueWait<Buffer>;

export function queueEntryOf(layout: EtcdKeyLayout, kv: KeyValue): QueueEntry {
  // A key of the lock's range this layout did not write (by hand, say) counts as exclusive: it holds its place.
  const shape = layout.parse(kv.key)?.shape ?? 'plain';
  const permits = shape === 'permits' ? (decodeWaiterValue(kv.value).permits ?? 1) : 0;
  return { key: kv.key, createRevision: revision(kv.create_revision), shape, permits };
}
