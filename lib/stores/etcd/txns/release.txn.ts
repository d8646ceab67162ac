import type { CallOptions, EtcdRpc } from './etcd-rpc.js';

/**
 * Deletes a holder's key if it is still the key created at `createRevision` (the grant's fencing token):
 * token-checked, since nobody else ever writes that key. The delete is what wakes the next waiter.
 */
export async function releaseTxn(rpc: EtcdRpc, options: CallOptions, waiterKey: Buffer, createRevision: number): Promise<boolean> {
  const reply = await rpc.kv.txn(
    {
      compare: [{ key: waiterKey, target: 'Create', result: 'Equal', create_revision: createRevision }],
      success: [{ request_delete_range: { key: waiterKey } }],
    },
    options,
  );
  return reply.succeeded;
}
