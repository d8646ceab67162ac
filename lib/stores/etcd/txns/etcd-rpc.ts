import type { IKeyValue, KVClient, LeaseClient } from 'etcd3';

/** The two etcd services the lock protocol speaks to, straight from an `etcd3` client. */
export interface EtcdRpc {
  readonly kv: KVClient;
  readonly lease: LeaseClient;
}

/** gRPC call options (a `deadline`, mostly), typed from etcd3's own signatures. */
export type CallOptions = NonNullable<Parameters<KVClient['txn']>[1]>;

export type KeyValue = IKeyValue;

/** A key range as etcd requests take it: `[key, range_end)`. */
export interface KeyRange {
  readonly key: Buffer;
  readonly range_end: Buffer;
}

/** Revisions travel as decimal strings; they stay far below 2^53 for any real cluster's lifetime. */
export const revision = (value: string): number => Number(value);
