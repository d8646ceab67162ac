import type { CallOptions, EtcdRpc, KeyRange, KeyValue } from './etcd-rpc.js';
import { revision } from './etcd-rpc.js';

export interface SharedEnqueueInput {
  readonly lock: KeyRange;
  readonly waiterKey: Buffer;
  readonly leaseId: string;
  readonly value: Buffer;
  readonly reads: WaiterReads;
}

/**
 * What a waiter reads of the keys before its own, by its shape (`EtcdKeyLayout.waitRanges`): only the
 * last key of the ranges that keep it out, without its value; a permit waiter also the permit keys
 * created after `after` (the last key of another shape it saw: the ones before that cannot matter while
 * that key is there), with their values (each one's N).
 */
export interface WaiterReads {
  readonly blocking: readonly KeyRange[];
  readonly sharing?: KeyRange;
  /** For a permit waiter: `sharing` is read from the next create revision on (0: all of it). */
  readonly after?: number;
}

/** What a waiter found before its key: the last key that keeps it out, if any, and a permit waiter's run. */
export interface WaiterView {
  /** The last key before it that it cannot share the lock with (keys only). */
  readonly blocker?: KeyValue;
  /** The permit keys before it (from `after` on), in queue order, with values; empty for other shapes. */
  readonly sharing: KeyValue[];
}

export interface SharedEnqueueResult {
  /** The key's create revision: its place in the queue, and its fencing token once it holds. */
  readonly createRevision: number;
  /** What was before the key when it was put; absent when it was there already (a retry after an unseen put): read its place then. */
  readonly view?: WaiterView;
}

/**
 * Joins a lock's queue with a shaped key: reads what is before it (every key, as the key is put last)
 * and puts it, unless it exists already (a retry after an unseen success), all at one revision.
 */
export async function sharedEnqueueTxn(rpc: EtcdRpc, options: CallOptions, input: SharedEnqueueInput): Promise<SharedEnqueueResult> {
  const reads = readsOf(input.reads);
  const reply = await rpc.kv.txn(
    {
      compare: [{ key: input.waiterKey, target: 'Create', result: 'Equal', create_revision: 0 }],
      // The reads come before the put: they see every key but this one.
      success: [...reads, { request_put: { key: input.waiterKey, value: input.value, lease: input.leaseId } }],
      failure: [{ request_range: { key: input.waiterKey, keys_only: true } }],
    },
    options,
  );
  if (!reply.succeeded) return { createRevision: revision(reply.responses[0]!.response_range.kvs[0]!.create_revision) };
  return { createRevision: revision(reply.header.revision), view: viewOf(input.reads, reply.responses) };
}

export type SharedPositionResult =
  /** The key is gone (its etcd lease expired, or it was force-released): the place is lost. */
  | { readonly present: false }
  /** What is before it, and with `successor` the key right behind it (if any), by name. */
  | ({ readonly present: true; readonly successor?: Buffer } & WaiterView);

/**
 * Where a shaped waiter stands, read at one revision: its own key still there, what is before it (see
 * `WaiterReads`), and with `successor` the key right behind it (a permit waiter's mark is for it).
 */
export async function sharedPositionTxn(
  rpc: EtcdRpc,
  options: CallOptions,
  input: { readonly lock: KeyRange; readonly waiterKey: Buffer; readonly createRevision: number; readonly reads: WaiterReads; readonly successor: boolean },
): Promise<SharedPositionResult> {
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

/** The range requests of `reads`, of keys created before `before` (every key when undefined). */
function readsOf(reads: WaiterReads, before?: number) {
  const max = before === undefined ? {} : { max_create_revision: before - 1 };
  const last = reads.blocking.map(
    (range) => ({ request_range: { ...range, ...max, sort_order: 'Descend', sort_target: 'Create', limit: 1, keys_only: true } }) as const,
  );
  if (!reads.sharing) return last;
  const min = reads.after ? { min_create_revision: reads.after + 1 } : {};
  return [...last, { request_range: { ...reads.sharing, ...max, ...min, sort_order: 'Ascend', sort_target: 'Create' } } as const];
}

function viewOf(reads: WaiterReads, responses: ReadonlyArray<{ response_range: { kvs: KeyValue[] } }>): WaiterView {
  let blocker: KeyValue | undefined;
  for (const response of responses.slice(0, reads.blocking.length)) {
    const kv = response.response_range.kvs[0];
    if (kv && (!blocker || revision(kv.create_revision) > revision(blocker.create_revision))) blocker = kv;
  }
  return { blocker, sharing: reads.sharing ? responses[reads.blocking.length]!.response_range.kvs : [] };
}
