import type { ZookeeperStat } from '../zookeeper-client.interface.js';
import type { ZookeeperSession } from '../zookeeper-session.js';
import { watchContender } from './contenders.query.js';

/** One listener on a node's next change, from `DataWatchHub.watch`. */
export interface DataWatch {
  /**
   * The node's stat when the session's watch on it was set: a write that came before (a version past the
   * one the caller expects) fired nothing this listener will hear of.
   */
  readonly stat: ZookeeperStat;
  /** Stops listening. The session's watch stays until the node changes: this client cannot take one back. */
  stop(): void;
}

interface NodeWatch {
  readonly listeners: Set<() => void>;
  /** The request that sets the session's watch: the node's stat then, or null when it is gone. */
  set?: Promise<ZookeeperStat | null>;
}

/**
 * The data watches of one session, shared by every waiter of this process on the same node: one watch on
 * the server per node (ZooKeeper keeps one per session and path anyway), one listener on the client, and
 * the waiters listening now called from it. node-zookeeper-client keeps one emitter per watched path and
 * adds a listener to it for every read that sets a watch, until the node changes: each waiter asking for
 * its own kept itself (its wake-up, its place) referenced that long after it was granted or gave up (for
 * ever behind a writer that holds on), sent a request for a watch the server had already, and the
 * eleventh on one node had Node warn of a leak. Here a waiter stops listening when it ends or waits for
 * something else, and a node watched already costs no request. When the session ends, its watches go with
 * it: every listener is called once (its waiter looks again, and finds its node gone).
 */
export class DataWatchHub {
  private readonly nodes = new Map<string, NodeWatch>();

  constructor(private readonly session: ZookeeperSession) {
    session.whenEnded(() => this.end());
  }

  /** Listeners in place now, on every node. */
  get listeners(): number {
    let count = 0;
    for (const node of this.nodes.values()) count += node.listeners.size;
    return count;
  }

  /**
   * Calls `onChange` once, at the node's next deletion or write (or the session's end). Resolves with the
   * node's stat as the session's watch was set, or null when the node is gone already (no listener stays).
   */
  async watch(key: string, path: string, onChange: () => void): Promise<DataWatch | null> {
    const node = this.nodes.get(path) ?? this.arm(key, path);
    // A function of its own: the same onChange given twice is two listeners, each stopped by its own stop.
    const listener = (): void => onChange();
    node.listeners.add(listener);
    const stop = (): void => void node.listeners.delete(listener);
    let stat: ZookeeperStat | null;
    try {
      stat = await node.set!;
    } catch (error) {
      stop();
      throw error;
    }
    if (stat) return { stat, stop };
    stop();
    return null;
  }

  private arm(key: string, path: string): NodeWatch {
    const node: NodeWatch = { listeners: new Set() };
    this.nodes.set(path, node);
    node.set = watchContender(this.session, key, path, () => this.fire(path, node));
    // Not set (no node, no answer in time): the next waiter asks again. A watch whose request had no answer
    // in time may still be set later; it then fires for a node this hub forgot, and is ignored.
    node.set.then(
      (stat) => stat ?? this.forget(path, node),
      () => this.forget(path, node),
    );
    return node;
  }

  private fire(path: string, node: NodeWatch): void {
    if (this.nodes.get(path) !== node) return;
    this.nodes.delete(path);
    const listeners = [...node.listeners];
    node.listeners.clear();
    for (const listener of listeners) listener();
  }

  private forget(path: string, node: NodeWatch): void {
    if (this.nodes.get(path) === node) this.nodes.delete(path);
  }

  private end(): void {
    for (const [path, node] of [...this.nodes]) this.fire(path, node);
  }
}
