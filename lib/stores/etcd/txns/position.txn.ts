import type { CallOptions, EtcdRpc, KeyRange } from './etcd-rpc.js';

export interface PositionTxnInput {
  readonly lock: KeyRange;
  readonly waiterKey: Buffer;
  readonly createRevision: number;
}

export type PositionTxnResult =
  /** The waiter key is gone (its etcd lease expired, or it was force-released): the place is lost. */
  | { readonly present: false }
  /** First in line: the lock is granted. */
  | { readonly present: true; readonly predecessor: undefined }
  /** The waiter right before this one: the only key to watch (etcd's `waitDeletes`). */
  | { readonly present: true; readonly predecessor: Buffer };

/** Where a waiter stands, read at one revision: its own key still there, and the one key just before it. */
export async function positionTxn(rpc: EtcdRpc, options: CallOptions, input: PositionTxnInput): Promise<PositionTxnResult> {
  const reply = await rpc.kv.txn(
    {
      compare: [{ key: input.waiterKey, target: 'Create', result: 'Equal', create_revision: input.createRevision }],
      success: [
        {
          request_range: {
            ...input.lock,
            max_create_revision: input.createRevision - 1,
            sort_order: 'Descend',
            sort_target: 'Create',
            limit: 1,
            keys_only: true,
          },
        },
      ],
    },
    options,
  );
  if (!reply.succeeded) return { present: false };
  const predecessor = reply.responses[0]!.response_range.kvs[0];
  if (!predecessor) return { present: true, predecessor: undefined };
  return { present: true, predecessor: predecessor.key };
}
