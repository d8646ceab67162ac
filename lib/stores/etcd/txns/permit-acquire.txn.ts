import type { AcquireTxnInput } from './acquire.txn.js';
import type { CallOptions, EtcdRpc } from './etcd-rpc.js';
import { revision } from './etcd-rpc.js';

/**
 * A permit's single attempt, once the caller read the queue at revision `seenAt` and found the permit
 * free there (etcd cannot count keys in a comparison): puts the permit key only if no key joined the lock
 * since. Keys that went since only leave more room, and a put that keeps a key's create revision (a lease
 * move, a waiter's mark) changes nothing, so the comparison is on create revisions. False when a key
 * joined: the caller reads the queue again.
 */
export async function permitAcquireTxn(
  rpc: EtcdRpc,
  options: CallOptions,
  input: AcquireTxnInput & { readonly seenAt: number },
): Promise<{ readonly granted: true; readonly fencingToken: number } | { readonly granted: false }> {
  const reply = await rpc.kv.txn(
    {
      compare: [{ ...input.lock, target: 'Create', result: 'Less', create_revision: input.seenAt + 1 }],
      success: [{ request_put: { key: input.waiterKey, value: input.value, lease: input.leaseId } }, { request_range: { key: input.waiterKey, keys_only: true } }],
    },
    options,
  );
  if (!reply.succeeded) return { granted: false };
  return { granted: true, fencingToken: revision(reply.responses[1]!.response_range.kvs[0]!.create_revision) };
}
