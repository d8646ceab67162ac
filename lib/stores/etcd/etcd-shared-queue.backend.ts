import { watchDeletions } from './etcd-deletion-watch.js';
import { encodeWaiterValue, type QueueShape } from './etcd-key-layout.js';
import { etcdQueueBackend } from './etcd-queue.backend.js';
import { queueEntryOf, type QueueEntry } from './etcd-queue-order.js';
import type { SharedQueueBackend } from './etcd-shared-queue.js';
import type { EtcdStoreContext } from './etcd-store-context.js';
import { revision } from './txns/etcd-rpc.js';
import { moveToLeaseTxn } from './txns/move-to-lease.txn.js';
import { sharedEnqueueTxn, sharedPositionTxn, type WaiterView } from './txns/shared-queue.txn.js';

/**
 * The etcd requests behind `acquireInSharedQueue` for one shaped wait, each one round trip under the
 * per-command timeout (a permit waiter's look, rarely, two). Leases, keep-alives and leaving are the plain
 * queue's; the key carries the shape. A look reads only what the shape waits for (`WaiterReads`): a
 * reader or writer the last key that keeps it out, a permit waiter also the permit keys after that key.
 */
export function etcdSharedQueueBackend(context: EtcdStoreContext, shape: QueueShape, permits: number | undefined): SharedQueueBackend {
  const { rpc, commands, layout } = context;
  const plain = etcdQueueBackend(context);
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
      const ticket = await plain.lease(request);
      return { ...ticket, waiterKey: layout.waiterKey(request.key, ticket.leaseId, shape) };
    },
    enqueue: async (request, ticket) => {
      const lock = layout.lockRange(request.key);
      const reads = layout.waitRanges(request.key, shape);
      const joined = await commands.run('acquire', request.key, (options) =>
        sharedEnqueueTxn(rpc, options, { lock, waiterKey: ticket.waiterKey, leaseId: ticket.leaseId, value: value(request.holder, request.leaseMs), reads }),
      );
      return { createRevision: joined.createRevision, earlier: joined.view && earlier(joined.view) };
    },
    position: async (request, ticket) => {
      const lock = layout.lockRange(request.key);
      const read = (after: number) =>
        commands.run('acquire', request.key, (options) =>
          sharedPositionTxn(rpc, options, {
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
