import { retryDelayMs } from '../../support/retry-delay.js';
import { holdingCount } from '../queue/queue-order.js';
import { ZK, isNodeReply } from './zookeeper-reply.js';
import { queueEntriesOf, sortContenders } from './zookeeper-key-layout.js';
import type { ZookeeperStoreContext } from './zookeeper-store-context.js';
import type { ZookeeperSession } from './zookeeper-session.js';

/**
 * Release notifications for one key: a child watch on the lock's parent, re-armed at every event. A
 * release (a holder's node deleted: the one plain holder or writer, or any reader or permit holder)
 * calls the listener; a new waiter or a minimum hold (a value change) does not. A key nobody holds may
 * have no parent node (the last release deleted it): the watch then waits for its creation instead, and
 * never creates it (a watched, unused key leaves no node behind).
 * Watches live on a session: when it ends, the listener is called once (a release may have been missed)
 * and the watch moves to a live session.
 */
export class ZookeeperReleaseWatch {
  private stopped = false;
  /** The holders' paths at the last look (the front of the queue, see queue/queue-order.ts). */
  private holders = new Set<string>();
  private failures = 0;
  private unsubscribe?: () => void;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly context: ZookeeperStoreContext,
    private readonly key: string,
    private readonly listener: () => void,
  ) {}

  /** Resolves once the watch is set. */
  async start(): Promise<void> {
    await this.arm(await this.context.reader());
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.retry);
  }

  private async arm(session: ZookeeperSession): Promise<void> {
    if (this.stopped) return;
    const lockPath = this.context.layout.lockPath(this.key);
    this.unsubscribe?.();
    this.unsubscribe = session.whenEnded(() => {
      this.notify();
      this.again();
    });
    let names: string[];
    try {
      names = await session.call('subscribe', this.key, (client) => client.getChildren(lockPath, () => this.again()));
    } catch (error) {
      if (!isNodeReply(error, ZK.NONODE)) throw error;
      // No parent: nobody holds the key. Watch for the parent's creation (the next contender's).
      const created = await session.call('subscribe', this.key, (client) => client.exists(lockPath, () => this.again()));
      if (created) return this.arm(session);
      names = [];
    }
    const entries = queueEntriesOf(lockPath, sortContenders(names));
    const present = new Set(entries.map((entry) => entry.key));
    if ([...this.holders].some((path) => !present.has(path))) this.notify();
    this.holders = new Set(entries.slice(0, holdingCount(entries)).map((entry) => entry.key));
    this.failures = 0;
  }

  private notify(): void {
    if (!this.stopped) this.listener();
  }

  /** Re-arms after an event (or a failure, with backoff). */
  private again(): void {
    if (this.stopped) return;
    this.context
      .reader()
      .then((session) => this.arm(session))
      .catch(() => {
        if (this.stopped) return;
        this.retry = setTimeout(() => this.again(), retryDelayMs(++this.failures, 50, 1_000));
        this.retry.unref();
      });
  }
}
