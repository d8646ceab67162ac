import { revision, type CallOptions, type EtcdRpc, type KeyRange, type KeyValue } from './etcd-rpc.js';

/** The owner of one lock: its key with the lowest create revision, with its value. */
export async function ownerQuery(rpc: EtcdRpc, options: CallOptions, lock: KeyRange): Promise<KeyValue | undefined> {
  const reply = await rpc.kv.range({ ...lock, sort_order: 'Ascend', sort_target: 'Create', limit: 1 }, options);
  return reply.kvs[0];
}

const PAGE = 1_000;

/**
 * Every key of a prefix, page by page (for the runbook's listing, never for hot paths); `send` runs each
 * page's request, so every page gets its own timeout.
 */
export async function allKeysQuery(
  rpc: EtcdRpc,
  send: <T>(request: (options: CallOptions) => Promise<T>) => Promise<T>,
  range: KeyRange,
): Promise<KeyValue[]> {
  const keys: KeyValue[] = [];
  let from = range.key;
  for (;;) {
    const start = from;
    const reply = await send((options) => rpc.kv.range({ key: start, range_end: range.range_end, limit: PAGE }, options));
    keys.push(...reply.kvs);
    if (!reply.more || reply.kvs.length === 0) return keys;
    from = Buffer.concat([reply.kvs[reply.kvs.length - 1]!.key, Buffer.from([0])]);
  }
}

/** One waiter key as it is now (its create revision and the lease it is attached to), if it exists. */
export async function keyQuery(rpc: EtcdRpc, options: CallOptions, waiterKey: Buffer): Promise<KeyValue | undefined> {
  const reply = await rpc.kv.range({ key: waiterKey, keys_only: true }, options);
  return reply.kvs[0];
}

/** One lock's whole queue in create-revision order, with values, and the revision it was read at. */
export async function queueQuery(rpc: EtcdRpc, options: CallOptions, lock: KeyRange): Promise<{ revision: number; kvs: KeyValue[] }> {
  const reply = await rpc.kv.range({ ...lock, sort_order: 'Ascend', sort_target: 'Create' }, options);
  return { revision: revision(reply.header.revision), kvs: reply.kvs };
}
