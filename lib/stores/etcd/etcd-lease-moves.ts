import type { EtcdGrant } from './etcd-grants.js';
import { encodeWaiterValue } from './etcd-key-layout.js';
import type { EtcdStoreContext } from './etcd-store-context.js';
import { moveToLeaseTxn } from './txns/move-to-lease.txn.js';

/**
 * Minimum hold: the released key moves to a fresh lease of (at least) `keepMs` and is deleted when the
 * hold ends (`schedule` runs that); if this process dies first, that lease deletes it. Waiters are not
 * woken by the move (a put), only by the deletion. False when the key was no longer the grant's.
 */
export async function keepForMinimumHold(
  context: EtcdStoreContext,
  token: string,
  grant: EtcdGrant,
  keepMs: number,
  schedule: (endHold: () => void) => void,
): Promise<boolean> {
  const hold = await context.grantHold(grant.key, keepMs);
  const value = encodeWaiterValue({ holder: grant.holder, leaseMs: keepMs });
  let moved: boolean;
  try {
    moved = await context.commands.run('release', grant.key, (options) =>
      moveToLeaseTxn(context.rpc, options, { waiterKey: grant.waiterKey, createRevision: grant.fencingToken, leaseId: hold.id, value }),
    );
  } catch (error) {
    // Unknown: the key stays on whichever lease it ended up on and goes when that one runs out, as it
    // would have without a release. Revoking either could end the hold early.
    context.grants.delete(token);
    throw error;
  }
  context.forget(token, grant);
  if (!moved) {
    context.revokeLater(hold);
    return false;
  }
  schedule(() => context.revokeLater(hold));
  return true;
}

/**
 * A new lease length (`extend(ms)`): the key moves to a lease of that length, keeping its create revision
 * (the fencing token) and its place. False when the key was no longer the grant's.
 */
export async function reletGrant(context: EtcdStoreContext, grant: EtcdGrant, leaseMs: number, sentAt: number): Promise<boolean> {
  const lease = await context.grantLease('renew', grant.key, leaseMs);
  const value = encodeWaiterValue({ holder: grant.holder, leaseMs });
  const moved = await context.commands.run(
    'renew',
    grant.key,
    (options) => moveToLeaseTxn(context.rpc, options, { waiterKey: grant.waiterKey, createRevision: grant.fencingToken, leaseId: lease.id, value }),
    () => context.revokeLater(lease),
  );
  if (!moved) {
    context.revokeLater(lease);
    return false;
  }
  context.revokeLater({ id: grant.leaseId, ttlSeconds: grant.ttlSeconds });
  Object.assign(grant, { leaseId: lease.id, ttlSeconds: lease.ttlSeconds, leaseMs, refreshedAt: sentAt });
  return true;
}
