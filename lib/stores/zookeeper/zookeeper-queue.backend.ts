import { encodeContenderValue, type ContenderShape } from './zookeeper-key-layout.js';
import type { ZookeeperQueueBackend } from './zookeeper-lock-queue.js';
import type { ZookeeperStoreContext } from './zookeeper-store-context.js';

/**
 * The ZooKeeper requests behind `acquireInZookeeperQueue` for the waits of one shape, each one round trip
 * under the per-command timeout: the contender's node and its place (one read of the lock's children,
 * whose names say every contender's shape and N), a watch on one node (none when the session watches it
 * already), its mark, its deletion.
 */
export function zookeeperQueueBackend(context: ZookeeperStoreContext, shape: ContenderShape): ZookeeperQueueBackend {
  return {
    join: (request) => context.join(request.key, request.leaseMs, request.holder, shape),
    position: (request, ticket) => context.position(request.key, ticket),
    // A data watch fires at the node's deletion and at a write of its value (a mark, a renewal that changed
    // its length, a minimum hold): each is a reason to look again, none a grant by itself. The waiters of
    // a session share its watch on a node.
    watch: (request, ticket, path, onChange) => context.watchesOn(ticket.session).watch(request.key, path, onChange),
    mark: (request, ticket) => context.mark(request.key, ticket, encodeContenderValue({ holder: request.holder, leaseMs: request.leaseMs })),
    leave: (request, ticket) => context.leave(request.key, ticket),
    granted: (request, ticket, startedAt) => void context.grant(request.token, request.key, request.holder, request.leaseMs, ticket, startedAt),
  };
}
