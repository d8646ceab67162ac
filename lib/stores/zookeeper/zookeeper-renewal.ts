import type { RenewOutcome, RenewRequest } from '../lock-store.interface.js';
import { setIfCreatedAt } from './nodes/checked-write.node.js';
import { statOf } from './nodes/contenders.query.js';
import { encodeContenderValue } from './zookeeper-key-layout.js';
import type { ZookeeperStoreContext } from './zookeeper-store-context.js';
import { unavailable } from './zookeeper-session.js';

/**
 * The watchdog's renewal round on ZooKeeper. The session keeps itself alive (the client pings it); what
 * a renewal adds is proof, from the server, on the grant's own session: the node created at the grant's
 * czxid is still there (a force-release or an expired session would have deleted it). Its answer moves
 * the grant's local deadline to the request's send time plus `leaseMs`, which is never later than the
 * ensemble could expire the session (the server heard from it after the send). A longer `leaseMs` than
 * the session's timeout cannot be kept: that request stays unknown (an error), and the lease ends at its
 * deadline. A new length is written to the node's value, for the runbook's TTL.
 */
export async function renewZookeeperGrants(context: ZookeeperStoreContext, requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
  const sentAt = Date.now();
  return Promise.all(
    requests.map(async ({ key, token, leaseMs }): Promise<RenewOutcome> => {
      const grant = context.grants.get(key, token);
      if (!grant) return false;
      const { session } = grant;
      if (leaseMs > session.timeoutMs) {
        return unavailable('renew', key, session.servers, `a lease of ${leaseMs} ms is longer than its session's timeout (${session.timeoutMs} ms)`);
      }
      try {
        const held =
          leaseMs === grant.leaseMs
            ? (await statOf(session, 'renew', key, grant.path))?.czxid === grant.fencingToken
            : await setIfCreatedAt(session, 'renew', key, grant.path, grant.fencingToken, encodeContenderValue({ holder: grant.holder, leaseMs }));
        if (!held) {
          context.grants.forget(token, grant);
          return false;
        }
        context.grants.extend(token, grant, leaseMs, sentAt);
        return true;
      } catch (error) {
        // A session that expired took the node with it: that is "not ours", not "unknown".
        if (session.ended) {
          context.grants.forget(token, grant);
          return false;
        }
        return error as Error;
      }
    }),
  );
}
