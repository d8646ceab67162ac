import type { KeyRange, KeyValue } from './etcd-rpc.js';
import { revision } from './etcd-rpc.js';

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

/** The range requests of `reads`, of keys created before `before` (every key when undefined). */
export function readsOf(reads: WaiterReads, before?: number) {
  const max = before === undefined ? {} : { max_create_revision: before - 1 };
  const last = reads.blocking.map(
    (range) => ({ request_range: { ...range, ...max, sort_order: 'Descend', sort_target: 'Create', limit: 1, keys_only: true } }) as const,
  );
  if (!reads.sharing) return last;
  const min = reads.after ? { min_create_revision: reads.after + 1 } : {};
  return [...last, { request_range: { ...reads.sharing, ...max, ...min, sort_order: 'Ascend', sort_target: 'Create' } } as const];
}

export function viewOf(reads: WaiterReads, responses: ReadonlyArray<{ response_range: { kvs: KeyValue[] } }>): WaiterView {
  let blocker: KeyValue | undefined;
  for (const response of responses.slice(0, reads.blocking.length)) {
    const kv = response.response_range.kvs[0];
    if (kv && (!blocker || revision(kv.create_revision) > revision(blocker.create_revision))) blocker = kv;
  }
  return { blocker, sharing: reads.sharing ? responses[reads.blocking.length]!.response_range.kvs : [] };
}
