import type { CallOptions, EtcdRpc, KeyRange } from './etcd-rpc.js';
import { revision } from './etcd-rpc.js';

export interface EnqueueTxnInput {
  readonly lock: KeyRange;
  readonly waiterKey: Buffer;
  readonly leaseId: string;
  readonly value: Buffer;
}

export interface EnqueueTxnResult {
  /** The waiter key's create revision: its place in the queue, and its fencing token once it owns the lock. */
  readonly createRevision: number;
  /** True when no earlier waiter exists: the lock is granted. */
  readonly owner: boolean;
}

/**
 * Joins the lock's queue (etcd's `Mutex.tryAcquire`): puts the waiter key unless it exists already (a
 * retry after an unseen success), and reads the first waiter, all at one revision.
 */
export async function enqueueTxn(rpc: EtcdRpc, options: CallOptions, input: EnqueueTxnInput): Promise<EnqueueTxnResult> {
  const first = { request_range: { ...input.lock, sort_order: 'Ascend', sort_target: 'Create', limit: 1, keys_only: true } } as const;
  const reply = await rpc.kv.txn(
    {
      compare: [{ key: input.waiterKey, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: input.waiterKey, value: input.value, lease: input.leaseId } }, first],
      failure: [{ request_range: { key: input.waiterKey } }, first],
    },
    options,
  );
  const createRevision = reply.succeeded
    ? revision(reply.header.revision)
    : revision(reply.responses[0]!.response_range.kvs[0]!.create_revision);
  const head = reply.responses[1]!.response_range.kvs[0];
  return { createRevision, owner: head !== undefined && revision(head.create_revision) === createRevision };
}
