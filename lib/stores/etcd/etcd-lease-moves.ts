import { grantValue, type EtcdGrant } from './etcd-grants.js';
import type { EtcdStoreContext } from './etcd-store-context.js';
import { revision } from './txns/etcd-rpc.js';
import { revokeLease } from './txns/leases.rpc.js';
import { moveToLeaseTxn } from './txns/move-to-lease.txn.js';
import { keyQuery } from './txns/owners.query.js';

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
  let moved: boolean;
  try {
    // An earlier move without an answer is settled first: the hold starts from the lease the key is on.
    moved = await settleMove(context, grant, 'release');
    if (moved) {
      const hold = await context.grantHold(grant.key, keepMs);
      const value = grantValue(grant, keepMs);
      moved = await context.commands.run('release', grant.key, (options) =>
        moveToLeaseTxn(context.rpc, options, { waiterKey: grant.waiterKey, createRevision: grant.fencingToken, fromLeaseId: grant.leaseId, leaseId: hold.id, value }),
      );
      if (moved) schedule(() => context.revokeLater(hold));
      else context.revokeLater(hold);
    }
  } catch (error) {
    // Unknown: the key stays on whichever lease it ended up on and goes when that one runs out, as it
    // would have without a release. Revoking any could end the hold early.
    context.grants.delete(token);
    throw error;
  }
  context.forget(token, grant);
  return moved;
}

/**
 * A new lease length (`extend(ms)`): the key moves to a lease of that length, keeping its create revision
 * (the fencing token) and its place. False when the key was no longer the grant's.
 *
 * A move without an answer may have landed: revoking the new lease then would delete the key while the
 * holder goes on believing it holds it (and someone else gets the key). So the outcome is looked up
 * instead (`settleMove`), at once and, if etcd does not answer that either, before anything else is done
 * with the grant; both leases live until then.
 */
export async function reletGrant(context: EtcdStoreContext, grant: EtcdGrant, leaseMs: number, sentAt: number): Promise<boolean> {
  if (!(await settleMove(context, grant, 'renew'))) return false;
  const lease = await context.grantLease('renew', grant.key, leaseMs);
  const value = grantValue(grant, leaseMs);
  let moved: boolean;
  try {
    moved = await context.commands.run('renew', grant.key, (options) =>
      moveToLeaseTxn(context.rpc, options, { waiterKey: grant.waiterKey, createRevision: grant.fencingToken, fromLeaseId: grant.leaseId, leaseId: lease.id, value }),
    );
  } catch (unknown) {
    grant.moving = { ...lease, leaseMs, refreshedAt: sentAt };
    let held: boolean;
    try {
      held = await settleMove(context, grant, 'renew');
    } catch {
      throw unknown;
    }
    if (!held) return false;
    // Settled on the old lease: the extension did not happen, and the caller keeps the old length.
    if (grant.leaseId !== lease.id) throw unknown;
    return true;
  }
  if (!moved) {
    context.revokeLater(lease);
    return false;
  }
  context.revokeLater({ id: grant.leaseId, ttlSeconds: grant.ttlSeconds });
  Object.assign(grant, { leaseId: lease.id, ttlSeconds: lease.ttlSeconds, leaseMs, refreshedAt: sentAt });
  return true;
}

/**
 * Finds out where a move without an answer (`grant.moving`) left the key, and finishes it either way:
 * - on the new lease: the move landed; the grant adopts that lease (and its length), the old one is revoked;
 * - on the old lease: the new lease is revoked, which also keeps a copy of the move still on its way from
 *   ever landing (a put onto a lease that is gone fails); the key is then read once more, since the move
 *   may have landed just before the revoke, which took the key along;
 * - gone (expired, force-released) or on a lease this store never gave it: the grant is lost.
 * True while the grant still holds its key. Rejects with the store error when etcd did not answer: the
 * move stays pending, and both leases stay alive.
 */
export async function settleMove(context: EtcdStoreContext, grant: EtcdGrant, operation: string): Promise<boolean> {
  const moving = grant.moving;
  if (!moving) return true;
  let newLeaseRevoked = false;
  for (;;) {
    const kv = await context.commands.run(operation, grant.key, (options) => keyQuery(context.rpc, options, grant.waiterKey));
    const ours = kv !== undefined && revision(kv.create_revision) === grant.fencingToken;
    if (ours && kv.lease === moving.id && !newLeaseRevoked) {
      context.revokeLater({ id: grant.leaseId, ttlSeconds: grant.ttlSeconds });
      Object.assign(grant, { leaseId: moving.id, ttlSeconds: moving.ttlSeconds, leaseMs: moving.leaseMs, refreshedAt: moving.refreshedAt });
      grant.moving = undefined;
      return true;
    }
    if (!ours || kv.lease !== grant.leaseId) return false; // `forget` revokes both leases
    if (newLeaseRevoked) {
      grant.moving = undefined;
      return true;
    }
    await context.commands.run(operation, grant.key, (options) => revokeLease(context.rpc, options, moving.id));
    newLeaseRevoked = true;
  }
}

/**
 * What a renewal reports for a grant whose pending move could not be settled: unknown (the watchdog
 * retries), until the new lease could have run out. The watchdog's deadline still counts from the old
 * lease, and a move to a shorter lease may have put the key on one that ends first; from then on
 * only "lost" is safe.
 */
export function unsettledOutcome(context: EtcdStoreContext, grant: EtcdGrant, error: Error): boolean | Error {
  const moving = grant.moving;
  if (moving && Date.now() + context.commands.timeoutMs >= moving.refreshedAt + moving.leaseMs) return false;
  return error;
}
