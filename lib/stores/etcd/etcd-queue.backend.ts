import { watchDeletions } from './etcd-deletion-watch.js';
import { encodeWaiterValue } from './etcd-key-layout.js';
import type { QueueBackend } from './etcd-lock-queue.js';
import type { EtcdStoreContext } from './etcd-store-context.js';
import { enqueueTxn } from './txns/enqueue.txn.js';
import { keepAliveOnce } from './txns/leases.rpc.js';
import { positionTxn } from './txns/position.txn.js';

/** The etcd requests behind `acquireInQueue`, each one round trip under the per-command timeout. */
export function etcdQueueBackend(context: EtcdStoreContext): QueueBackend {
  const { rpc, commands, layout } = context;
  return {
    lease: async (request) => {
      const sentAt = Date.now();
      const lease = await context.grantLease('acquire', request.key, request.leaseMs);
      return { leaseId: lease.id, ttlSeconds: lease.ttlSeconds, waiterKey: layout.waiterKey(request.key, lease.id), refreshedAt: sentAt };
    },
    enqueue: (request, ticket) =>
      commands.run('acquire', request.key, (options) =>
        enqueueTxn(rpc, options, {
          lock: layout.lockRange(request.key),
          waiterKey: ticket.waiterKey,
          leaseId: ticket.leaseId,
          value: encodeWaiterValue({ holder: request.holder, leaseMs: request.leaseMs }),
        }),
      ),
    position: (request, ticket) =>
      commands.run('acquire', request.key, (options) =>
        positionTxn(rpc, options, { lock: layout.lockRange(request.key), waiterKey: ticket.waiterKey, createRevision: ticket.createRevision! }),
      ),
    keepAlive: async (request, ticket) => {
      const sentAt = Date.now();
      const ttls = await commands.run('acquire', request.key, (options) => keepAliveOnce(rpc, options, [ticket.leaseId]));
      if ((ttls.get(ticket.leaseId) ?? 0) <= 0) return false;
      ticket.refreshedAt = sentAt;
      return true;
    },
    watchDeletion: (key, onDelete) => watchDeletions(context.client, { key }, onDelete, context.tasks),
    leave: (ticket) => context.revokeLater({ id: ticket.leaseId, ttlSeconds: ticket.ttlSeconds }),
    granted: (request, ticket) =>
      context.remember(request.token, {
        key: request.key,
        waiterKey: ticket.waiterKey,
        fencingToken: ticket.createRevision,
        holder: request.holder,
        leaseId: ticket.leaseId,
        ttlSeconds: ticket.ttlSeconds,
        leaseMs: request.leaseMs,
        refreshedAt: ticket.refreshedAt,
      }),
  };
}
