import type { CallOptions, EtcdRpc } from './etcd-rpc.js';

/** etcd's answer to a keep-alive, revoke or TTL question about a lease that no longer exists, or to a put onto one. */
const LEASE_NOT_FOUND = /requested lease not found/;

/** Whether etcd refused a request because the lease it names no longer exists. */
export function isLeaseNotFound(error: unknown): boolean {
  return error instanceof Error && LEASE_NOT_FOUND.test(error.message);
}

export async function grantLease(rpc: EtcdRpc, options: CallOptions, ttlSeconds: number): Promise<{ id: string; ttlSeconds: number }> {
  const reply = await rpc.lease.leaseGrant({ TTL: ttlSeconds }, options);
  if (reply.error) throw new Error(`lease grant refused: ${reply.error}`);
  return { id: reply.ID, ttlSeconds: Number(reply.TTL) };
}

/** Revokes a lease and, atomically, deletes every key attached to it. False when it was gone already. */
export async function revokeLease(rpc: EtcdRpc, options: CallOptions, id: string): Promise<boolean> {
  try {
    await rpc.lease.leaseRevoke({ ID: id }, options);
    return true;
  } catch (error) {
    if (isLeaseNotFound(error)) return false;
    throw error;
  }
}

/** Seconds the lease has left, rounded down by etcd; -1 when it no longer exists. */
export async function leaseTtl(rpc: EtcdRpc, options: CallOptions, id: string): Promise<number> {
  const reply = await rpc.lease.leaseTimeToLive({ ID: id }, options);
  return Number(reply.TTL);
}

/**
 * One keep-alive per lease, all on one stream (etcd has no batched keep-alive; a stream is the closest:
 * one connection, requests pipelined, answered in order). Resolves with each lease's refreshed TTL, 0 for a
 * lease that is gone. The stream is closed once every lease has its answer; the call's deadline ends it
 * otherwise.
 */
export async function keepAliveOnce(rpc: EtcdRpc, options: CallOptions, ids: readonly string[]): Promise<Map<string, number>> {
  const ttls = new Map<string, number>();
  const pending = new Set(ids);
  if (pending.size === 0) return ttls;
  const stream = await rpc.lease.leaseKeepAlive(options);
  return new Promise<Map<string, number>>((resolve, reject) => {
    let settled = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve(ttls);
      stream.end();
    };
    stream.on('data', (reply: { ID: string; TTL: string }) => {
      ttls.set(reply.ID, Number(reply.TTL));
      pending.delete(reply.ID);
      if (pending.size === 0) finish();
    });
    // Kept for the stream's whole life: an 'error' without a listener would throw from the emitter.
    stream.on('error', (error: Error) => finish(error));
    stream.on('end', () => finish(new Error('the keep-alive stream ended before every lease was answered')));
    for (const id of pending) stream.write({ ID: id });
  });
}
