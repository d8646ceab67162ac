import type { AcquireTxnInput, AcquireTxnResult } from './acquire.txn.js';
import type { CallOptions, EtcdRpc, KeyRange } from './etcd-rpc.js';
import { revision } from './etcd-rpc.js';

/**
 * A reader's single attempt: puts the reader key (on its own lease) only if the lock has no key but
 * readers, i.e. both non-reader ranges are empty; every reader there holds then (see queue/queue-order.ts).
 * Otherwise reads the lock's first key, whose requested length stands in for the denial's TTL. A denied
 * attempt leaves nothing behind. The grant's fencing token is read back in the same transaction rather
 * than taken from its revision: a copy etcd3 sends again after a broken connection succeeds again and
 * puts the key once more, which keeps its create revision but moves the transaction's.
 */
export async function readerAcquireTxn(
  rpc: EtcdRpc,
  options: CallOptions,
  input: AcquireTxnInput & { readonly nonReaders: readonly KeyRange[] },
): Promise<AcquireTxnResult> {
  const reply = await rpc.kv.txn(
    {
      // Over a range, etcd compares every key in it; an empty range compares as create_revision 0.
      compare: input.nonReaders.map((range) => ({ ...range, target: 'Create', result: 'Equal', create_revision: 0 }) as const),
      success: [{ request_put: { key: input.waiterKey, value: input.value, lease: input.leaseId } }, { request_range: { key: input.waiterKey, keys_only: true } }],
      failure: [{ request_range: { ...input.lock, sort_order: 'Ascend', sort_target: 'Create', limit: 1 } }],
    },
    options,
  );
  if (reply.succeeded) return { granted: true, fencingToken: revision(reply.responses[1]!.response_range.kvs[0]!.create_revision) };
  return { granted: false, owner: reply.responses[0]!.response_range.kvs[0]! };
}
