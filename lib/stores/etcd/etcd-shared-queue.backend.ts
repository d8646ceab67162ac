import { watchDeletions } from './etcd-deletion-watch.js';
import { encodeWaiterValue, type QueueShape } from './etcd-key-layout.js';
import { etcdQueueBackend } from './etcd-queue.backend.js';
import { queueEntryOf } from './etcd-queue-order.js';
import type { SharedQueueBackend } from './etcd-shared-queue.js';
import type { EtcdStoreContext } from './etcd-store-context.js';
import { moveToLeaseTxn } from './txns/move-to-lease.txn.js';
import { sharedEnqueueTxn, sharedPositionTxn } from './txns/shared-queue.txn.js';

/**
 * The etcd requests behind `acquireInSharedQueue` for one shape, each one round trip under the
 * per-command timeout. Leases, keep-alives and leaving are the plain queue's; the key carries the shape.
 */
export function etcdSharedQueueBackend(context: EtcdStoreContext, shape: QueueShape, permits: number | undefined): SharedQueueBackend {
  const { rpc, commands, layout } = context;
  const plain = etcdQueueBackend(context);
  const value = (holder: string, leaseMs: number): Buffer => encodeWaiterValue({ holder, leaseMs, permits });
  const shapeOf = (key: Buffer | undefined): QueueShape | undefined => key && (layout.parse(key)?.shape ?? 'plain');
  return {
    lease: async (request) => {
      const ticket = await plain.lease(request);
      return { ...ticket, waiterKey: layout.waiterKey(request.key, ticket.leaseId, shape) };
    },
    enqueue: async (request, ticket) => {
      const lock = layout.lockRange(request.key);
      const joined = await commands.run('acquire', request.key, (options) =>
        sharedEnqueueTxn(rpc, options, { lock, waiterKey: ticket.waiterKey, leaseId: ticket.leaseId, value: value(request.holder, request.leaseMs) }),
      );
      return { createRevision: joined.createRevision, earlier: joined.earlier.map((kv) => queueEntryOf(layout, kv)), successor: shapeOf(joined.successor) };
    },
    position: async (request, ticket) => {
      const lock = layout.lockRange(request.key);
      const found = await commands.run('acquire', request.key, (options) =>
        sharedPositionTxn(rpc, options, { lock, waiterKey: ticket.waiterKey, createRevision: ticket.createRevision! }),
      );
      if (!found.present) return found;
      return { present: true, earlier: found.earlier.map((kv) => queueEntryOf(layout, kv)), successor: shapeOf(found.successor) };
    },
    keepAlive: plain.keepAlive,
    watch: (request, key, puts, onEvent) => watchDeletions(context.client, key ? { key } : layout.lockRange(request.key), onEvent, context.tasks, { puts }),
    // The same value on the same lease, only if the key is still the one created then and on that lease: a
    // key released or moved meanwhile is left alone. Only a wake-up: lost, the waiter behind looks again
    // on its own schedule.
    mark: (request, ticket) =>
      context.tasks.run(() =>
        commands.run('acquire', request.key, (options) =>
          moveToLeaseTxn(rpc, options, {
            waiterKey: ticket.waiterKey,
            createRevision: ticket.createRevision,
            fromLeaseId: ticket.leaseId,
            leaseId: ticket.leaseId,
            value: value(request.holder, request.leaseMs),
          }),
        ),
      ),
    leave: plain.leave,
    granted: (request, ticket) =>
      context.remember(request.token, {
        key: request.key,
        waiterKey: ticket.waiterKey,
        fencingToken: ticket.createRevision,
        holder: request.holder,
        permits,
        leaseId: ticket.leaseId,
        ttlSeconds: ticket.ttlSeconds,
        leaseMs: request.leaseMs,
        refreshedAt: ticket.refreshedAt,
      }),
  };
}
