import { revision, type CallOptions, type EtcdRpc, type KeyRange, type KeyValue } from './etcd-rpc.js';

/** The owner of one lock: its key with the lowest create revision, with its value. */
export async function ownerQuery(rpc: EtcdRpc, options: CallOptions, lock: KeyRange): Promise<KeyValue | undefined> {
  const reply = await rpc.kv.range({ ...lock, sort_order: 'Ascend', sort_target: 'Create', limit: 1 }, options);
  return reply.kvs[0];
}

const PAGE = 1_000;

/**
 * Every key of a prefix, page by page (for the runbook's listing, never for hot paths), every page read at
 * the first page's revision: a queue cut by a page boundary is one state, not two put together (a key that
 * joined between the pages and sorts into the later one would stand before keys it came after). `send`
 * runs each page's request, so every page gets its own timeout. Should etcd compact that revision between
 * two pages, the listing fails with the store's error, and the operator lists again.
 */
export async function allKeysQuery(
  rpc: EtcdRpc,
  send: <T>(request: (options: CallOptions) => Promise<T>) => Promise<T>,
  range: KeyRange,
): Promise<KeyValue[]> {
  const keys: KeyValue[] = [];
  let from = range.key;
  let at: string | undefined;
  for (;;) {
    const page = { key: from, range_end: range.range_end, limit: PAGE, ...(at === undefined ? {} : { revision: at }) };
    const reply = await send((options) => rpc.kv.range(page, options));
    at ??= reply.header.revision;
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
