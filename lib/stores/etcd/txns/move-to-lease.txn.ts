import type { CallOptions, EtcdRpc } from './etcd-rpc.js';

export interface MoveToLeaseInput {
  readonly waiterKey: Buffer;
  readonly createRevision: number;
  readonly leaseId: string;
  readonly value: Buffer;
}

/**
 * Re-attaches a holder's key to another etcd lease (with a new value), if it is still the key created at
 * `createRevision`. A put keeps the key's create revision, so the fencing token and the queue order stay;
 * it is a put, not a delete, so no waiter wakes. How a lease changes length (`extend`) and how a released
 * key is kept for its minimum hold. Idempotent: a retry puts the same again.
 */
export async function moveToLeaseTxn(rpc: EtcdRpc, options: CallOptions, input: MoveToLeaseInput): Promise<boolean> {
  const reply = await rpc.kv.txn(
    {
      compare: [{ key: input.waiterKey, target: 'Create', result: 'Equal', create_revision: input.createRevision }],
      success: [{ request_put: { key: input.waiterKey, value: input.value, lease: input.leaseId } }],
    },
    options,
  );
  return reply.succeeded;
}
