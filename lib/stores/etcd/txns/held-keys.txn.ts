import type { CallOptions, EtcdRpc } from './etcd-rpc.js';
import { revision } from './etcd-rpc.js';

export interface HeldKey {
  readonly waiterKey: Buffer;
  readonly createRevision: number;
  /** The lease the holder keeps alive: the key must be attached to it, or the keep-alive kept nothing. */
  readonly leaseId: string;
}

/** etcd refuses transactions with more operations than `--max-txn-ops` (128 by default). */
export const MAX_TXN_OPS = 128;

/**
 * Which of these holder keys still exist as created and on the holder's lease: one read-only transaction
 * (one revision) for up to {@link MAX_TXN_OPS} keys. The second half of a renewal, after the keep-alives:
 * a lease can be alive while its key was force-released, or while the key sits on another lease, whose
 * end the holder's keep-alives do not put off.
 */
export async function heldKeysTxn(rpc: EtcdRpc, options: CallOptions, keys: readonly HeldKey[]): Promise<boolean[]> {
  const reply = await rpc.kv.txn(
    { compare: [], success: keys.map(({ waiterKey }) => ({ request_range: { key: waiterKey, keys_only: true } })) },
    options,
  );
  return keys.map((held, i) => {
    const found = reply.responses[i]!.response_range.kvs[0];
    return found !== undefined && revision(found.create_revision) === held.createRevision && found.lease === held.leaseId;
  });
}
