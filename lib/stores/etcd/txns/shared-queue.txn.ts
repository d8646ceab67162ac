import type { CallOptions, EtcdRpc, KeyRange, KeyValue } from './etcd-rpc.js';
import { revision } from './etcd-rpc.js';

export interface SharedEnqueueInput {
  readonly lock: KeyRange;
  readonly waiterKey: Buffer;
  readonly leaseId: string;
  readonly value: Buffer;
}

export interface SharedEnqueueResult {
  /** The key's create revision: its place in the queue, and its fencing token once it holds. */
  readonly createRevision: number;
  /** Every key before it, in queue order, with values (a semaphore's N is in them). */
  readonly earlier: KeyValue[];
  /** The key right behind it: none behind a key just put, maybe one behind a key a retry found in place. */
  readonly successor?: Buffer;
}

const wholeQueue = (lock: KeyRange) => ({ request_range: { ...lock, sort_order: 'Ascend', sort_target: 'Create' } }) as const;

/**
 * Joins a lock's queue with a shaped key: puts it unless it exists already (a retry after an unseen
 * success), and reads the queue, all at one revision, so the caller knows at once whether it holds.
 */
export async function sharedEnqueueTxn(rpc: EtcdRpc, options: CallOptions, input: SharedEnqueueInput): Promise<SharedEnqueueResult> {
  const reply = await rpc.kv.txn(
    {
      compare: [{ key: input.waiterKey, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: input.waiterKey, value: input.value, lease: input.leaseId } }, wholeQueue(input.lock)],
      failure: [{ request_range: { key: input.waiterKey, keys_only: true } }, wholeQueue(input.lock)],
    },
    options,
  );
  const createRevision = reply.succeeded
    ? revision(reply.header.revision)
    : revision(reply.responses[0]!.response_range.kvs[0]!.create_revision);
  const queue = reply.responses[1]!.response_range.kvs;
  const earlier = queue.filter((kv) => revision(kv.create_revision) < createRevision);
  return { createRevision, earlier, successor: queue.find((kv) => revision(kv.create_revision) > createRevision)?.key };
}

export type SharedPositionResult =
  /** The key is gone (its etcd lease expired, or it was force-released): the place is lost. */
  | { readonly present: false }
  /** Every key before it, in queue order with values, and the key right behind it (if any) with its name. */
  | { readonly present: true; readonly earlier: KeyValue[]; readonly successor?: Buffer };

/** Where a shaped waiter stands, read at one revision: its own key still there, the keys before it, the one after. */
export async function sharedPositionTxn(
  rpc: EtcdRpc,
  options: CallOptions,
  input: { readonly lock: KeyRange; readonly waiterKey: Buffer; readonly createRevision: number },
): Promise<SharedPositionResult> {
  const reply = await rpc.kv.txn(
    {
      compare: [{ key: input.waiterKey, target: 'Create', result: 'Equal', create_revision: input.createRevision }],
      success: [
        { request_range: { ...input.lock, max_create_revision: input.createRevision - 1, sort_order: 'Ascend', sort_target: 'Create' } },
        {
          request_range: {
            ...input.lock,
            min_create_revision: input.createRevision + 1,
            sort_order: 'Ascend',
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
  return { present: true, earlier: reply.responses[0]!.response_range.kvs, successor: reply.responses[1]!.response_range.kvs[0]?.key };
}
