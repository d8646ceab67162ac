import type { CallOptions, EtcdRpc } from './etcd-rpc.js';

export interface MoveToLeaseInput {
  readonly waiterKey: Buffer;
  readonly createRevision: number;
  /** The lease the key is on now: a move that arrives after the key went elsewhere changes nothing. */
  readonly fromLeaseId: string;
  readonly leaseId: string;
  readonly value: Buffer;
}

/**
 * Re-attaches a holder's key to another etcd lease (with a new value), if it is still the key created at
 * `createRevision` and still on `fromLeaseId`. A put keeps the key's create revision, so the fencing token
 * and the queue order stay; it is a put, not a delete, so no waiter wakes. How a lease changes length
 * (`extend`) and how a released key is kept for its minimum hold. Idempotent: a retry puts the same again,
 * and a copy of the request that lands late, after the key moved on, fails its comparison. A put onto a
 * lease that no longer exists fails as a whole (etcd checks the lease), so revoking the target lease
 * makes sure a move still on its way never lands.
 */
export async function moveToLeaseTxn(rpc: EtcdRpc, options: CallOptions, input: MoveToLeaseInput): Promise<boolean> {
  const reply = await rpc.kv.txn(
    {
      compare: [
        { key: input.waiterKey, target: 'Create', result: 'Equal', create_revision: input.createRevision },
        { key: input.waiterKey, target: 'Lease', result: 'Equal', lease: input.fromLeaseId },
      ],
      success: [{ request_put: { key: input.waiterKey, value: input.value, lease: input.leaseId } }],
    },
    options,
  );
  return reply.succeeded;
}
