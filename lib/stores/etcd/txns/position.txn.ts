import type { CallOptions, EtcdRpc, KeyRange } from './etcd-rpc.js';
import { readsOf, viewOf, type WaiterReads, type WaiterView } from './waiter-reads.js';

export type PositionTxnResult =
  /** The key is gone (its etcd lease expired, or it was force-released): the place is lost. */
  | { readonly present: false }
  /** What is before it, and with `successor` the key right behind it (if any), by name. */
  | ({ readonly present: true; readonly successor?: Buffer } & WaiterView);

/**
 * Where a waiter stands, read at one revision: its own key still there, what is before it (see
 * `WaiterReads`), and with `successor` the key right behind it (a permit waiter's mark is for it).
 */
export async function positionTxn(
  rpc: EtcdRpc,
  options: CallOptions,
  input: { readonly lock: KeyRange; readonly waiterKey: Buffer; readonly createRevision: number; readonly reads: WaiterReads; readonly successor: boolean },
): Promise<PositionTxnResult> {
  const reads = readsOf(input.reads, input.createRevision);
  const behind = {
    request_range: { ...input.lock, min_create_revision: input.createRevision + 1, sort_order: 'Ascend', sort_target: 'Create', limit: 1, keys_only: true },
  } as const;
  const reply = await rpc.kv.txn(
    {
      compare: [{ key: input.waiterKey, target: 'Create', result: 'Equal', create_revision: input.createRevision }],
      success: input.successor ? [...reads, behind] : reads,
    },
    options,
  );
  if (!reply.succeeded) return { present: false };
  const successor = input.successor ? reply.responses[reads.length]!.response_range.kvs[0]?.key : undefined;
  return { present: true, successor, ...viewOf(input.reads, reply.responses) };
}

