import { watchDeletions } from './etcd-deletion-watch.js';
import type { QueueShape } from '../queue/queue-order.js';
import { encodeWaiterValue } from './etcd-key-layout.js';
import type { QueueBackend } from './etcd-lock-queue.js';
import { queueEntryOf, type QueueEntry } from './etcd-queue-order.js';
import type { EtcdStoreContext } from './etcd-store-context.js';
import { enqueueTxn } from './txns/enqueue.txn.js';
import { revision } from './txns/etcd-rpc.js';
import { isLeaseNotFound, keepAliveOnce } from './txns/leases.rpc.js';
import { moveToLeaseTxn } from './txns/move-to-lease.txn.js';
import { positionTxn } from './txns/position.txn.js';
import type { WaiterView } from './txns/waiter-reads.js';

/**
 * The etcd requests behind `acquireInQueue` for one wait of one shape, each one round trip under the
 * per-command timeout (a permit waiter's look, rarely, two). A look reads only what the shape waits for
 * (`WaiterReads`): a plain waiter, reader or writer the last key that keeps it out, a permit waiter also
 * the permit keys after that key. A semaphore's N (`permits`) rides in the key's value.
 */
export function etcdQueueBackend(context: EtcdStoreContext, shape: QueueShape, permits?: number): QueueBackend {
  const { rpc, commands, layout } = context;
  const value = (holder: string, leaseMs: number): Buffer => encodeWaiterValue({ holder, leaseMs, permits });
  const shapeOf = (key: Buffer | undefined): QueueShape | undefined => key && (layout.parse(key)?.shape ?? 'plain');
  // The last key of another shape a permit waiter saw before its own: the permit keys before that one
  // cannot admit it while it is there, so a look reads the permit keys after it only.
  let blockerSeen = 0;
  const earlier = (view: WaiterView): QueueEntry[] => {
    blockerSeen = view.blocker ? revision(view.blocker.create_revision) : 0;
    return view.blocker ? [queueEntryOf(layout, view.blocker)] : view.sharing.map((kv) => queueEntryOf(layout, kv));
  };
  return {
    lease: async (request) => {
      const sentAt = Date.now();
      const lease = await context.grantLease('acquire', request.key, request.leaseMs);
      return { leaseId: lease.id, ttlSeconds: lease.ttlSeconds, waiterKey: layout.waiterKey(request.key, lease.id, shape), refreshedAt: sentAt };
    },
    enqueue: async (request, ticket) => {
      const lock = layout.lockRange(request.key);
      const reads = layout.waitRanges(request.key, shape);
      const joined = await commands.run('acquire', request.key, (options) =>
        enqueueTxn(rpc, options, { lock, waiterKey: ticket.waiterKey, leaseId: ticket.leaseId, value: value(request.holder, request.leaseMs), reads }).catch(
          (error: unknown) => (isLeaseNotFound(error) ? undefined : Promise.reject(error)),
        ),
      );
      if (!joined) return 'lease-gone';
      return { createRevision: joined.createRevision, earlier: joined.view && earlier(joined.view) };
    },
    position: async (request, ticket) => {
      const lock = layout.lockRange(request.key);
      const read = (after: number) =>
        commands.run('acquire', request.key, (options) =>
          positionTxn(rpc, options, {
            lock,
            waiterKey: ticket.waiterKey,
            createRevision: ticket.createRevision!,
            reads: { ...layout.waitRanges(request.key, shape), after },
            successor: shape === 'permits',
          }),
        );
      let found = await read(blockerSeen);
      // That key went and none of another shape is left before this one: every permit key before it counts.
      if (found.present && !found.blocker && blockerSeen > 0) found = await read(0);
      if (!found.present) return found;
      return { present: true, earlier: earlier(found), successor: shapeOf(found.successor) };
    },
    keepAlive: async (request, ticket) => {
      const sentAt = Date.now();
      const ttls = await commands.run('acquire', request.key, (options) => keepAliveOnce(rpc, options, [ticket.leaseId]));
      if ((ttls.get(ticket.leaseId) ?? 0) <= 0) return false;
      ticket.refreshedAt = sentAt;
      return true;
    },
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
    leave: (ticket) => context.revokeLater({ id: ticket.leaseId, ttlSeconds: ticket.ttlSeconds }),
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
