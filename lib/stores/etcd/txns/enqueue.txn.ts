import type { CallOptions, EtcdRpc, KeyRange } from './etcd-rpc.js';
import { revision } from './etcd-rpc.js';
import { readsOf, viewOf, type WaiterReads, type WaiterView } from './waiter-reads.js';

export interface EnqueueTxnInput {
  readonly lock: KeyRange;
  readonly waiterKey: Buffer;
  readonly leaseId: string;
  readonly value: Buffer;
  readonly reads: WaiterReads;
}

export interface EnqueueTxnResult {
  /** The key's create revision: its place in the queue, and its fencing token once it holds. */
  readonly createRevision: number;
  /** What was before the key when it was put; absent when it was there already (a retry after an unseen put): read its place then. */
  readonly view?: WaiterView;
}

/**
 * Joins a lock's queue (etcd's `Mutex.tryAcquire`, for every shape): reads what is before the waiter key
 * (every key, as it is put last) and puts it, unless it exists already (a retry after an unseen success),
 * all at one revision.
 */
export async function enqueueTxn(rpc: EtcdRpc, options: CallOptions, input: EnqueueTxnInput): Promise<EnqueueTxnResult> {
  const reads = readsOf(input.reads);
  const reply = await rpc.kv.txn(
    {
      compare: [{ key: input.waiterKey, target: 'Create', result: 'Equal', create_revision: 0 }],
      // The reads come before the put: they see every key but this one.
      success: [...reads, { request_put: { key: input.waiterKey, value: input.value, lease: input.leaseId } }],
      failure: [{ request_range: { key: input.waiterKey, keys_only: true } }],
    },
    options,
  );
  if (!reply.succeeded) return { createRevision: revision(reply.responses[0]!.response_range.kvs[0]!.create_revision) };
  return { createRevision: revision(reply.header.revision), view: viewOf(input.reads, reply.responses) };
}

