import type { CallOptions, EtcdRpc, KeyRange, KeyValue } from './etcd-rpc.js';
import { revision } from './etcd-rpc.js';

export interface AcquireTxnInput {
  readonly lock: KeyRange;
  readonly waiterKey: Buffer;
  readonly leaseId: string;
  readonly value: Buffer;
}

export type AcquireTxnResult =
  | { readonly granted: true; readonly fencingToken: number }
  | { readonly granted: false; readonly owner: KeyValue };

/**
 * One attempt, no queueing: puts the waiter key (on its own lease) only if the lock has no key at all,
 * otherwise reads the owner (lowest create revision). A denied attempt leaves nothing behind. Idempotent:
 * a retry after an unseen success finds its own key as the owner, and is granted with the same token.
 */
export async function acquireTxn(rpc: EtcdRpc, options: CallOptions, input: AcquireTxnInput): Promise<AcquireTxnResult> {
  const reply = await rpc.kv.txn(
    {
      // Over a range, etcd compares every key in it; an empty range compares as create_revision 0.
      compare: [{ ...input.lock, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: input.waiterKey, value: input.value, lease: input.leaseId } }],
      failure: [{ request_range: { ...input.lock, sort_order: 'Ascend', sort_target: 'Create', limit: 1 } }],
    },
    options,
  );
  if (reply.succeeded) return { granted: true, fencingToken: revision(reply.header.revision) };
  const owner = reply.responses[0]!.response_range.kvs[0]!;
  if (owner.key.equals(input.waiterKey)) return { granted: true, fencingToken: revision(owner.create_revision) };
  return { granted: false, owner };
}
