import { LockConfigError } from '../../errors/lock-config.error.js';
import type { ZookeeperPackage } from './zookeeper.loader.js';
import { describeServers, unavailable, ZookeeperSession } from './zookeeper-session.js';

export interface ZookeeperSessionSettings {
  readonly connect: string;
  readonly commandTimeoutMs: number;
  /**
   * One session of this timeout for every lease up to it, instead of one session per lease length. A
   * crashed holder then blocks its key for this long, whatever its `leaseMs` (shorter leases are kept by
   * the live process itself): for tests whose leases are shorter than any session a server grants.
   * @default undefined (a session per lease length)
   */
  readonly sessionTimeoutMs?: number;
}

/**
 * The sessions of one store, one per session timeout: the session is the lease, so a lease of `leaseMs`
 * lives on a session whose negotiated timeout is exactly `leaseMs` (a crashed holder blocks its key no
 * longer than that). A length the server will not grant (outside its `minSessionTimeout` /
 * `maxSessionTimeout`) is refused with `LockConfigError`, the same way every time it is asked. A session
 * that ended is replaced on the next request.
 */
export class ZookeeperSessions {
  private readonly open = new Map<number, Promise<ZookeeperSession>>();
  private readonly refused = new Map<number, LockConfigError>();
  private reading?: Promise<ZookeeperSession>;
  private closed = false;

  constructor(
    private readonly zookeeper: ZookeeperPackage,
    private readonly settings: ZookeeperSessionSettings,
  ) {}

  /** The session timeout a lease of `leaseMs` lives on. */
  timeoutFor(leaseMs: number): number {
    return this.settings.sessionTimeoutMs ?? leaseMs;
  }

  /** The live session for leases of `leaseMs`, opened (and its granted timeout checked) when there is none. */
  async sessionFor(leaseMs: number): Promise<ZookeeperSession> {
    const timeoutMs = this.timeoutFor(leaseMs);
    const refusal = this.refused.get(timeoutMs);
    if (refusal) throw refusal;
    if (this.settings.sessionTimeoutMs !== undefined && leaseMs > this.settings.sessionTimeoutMs) {
      throw new LockConfigError('leaseMs', leaseMs, `at most the store's sessionTimeoutMs (${this.settings.sessionTimeoutMs} ms)`);
    }
    let pending = this.open.get(timeoutMs);
    if (pending) {
      const session = await pending.catch(() => undefined);
      if (session && !session.ended) return session;
      if (this.open.get(timeoutMs) === pending) this.open.delete(timeoutMs);
      pending = this.open.get(timeoutMs);
    }
    if (!pending) {
      pending = this.openChecked(timeoutMs);
      this.open.set(timeoutMs, pending);
      void pending.catch(() => {
        if (this.open.get(timeoutMs) === pending) this.open.delete(timeoutMs);
      });
    }
    return pending;
  }

  /**
   * Any live session, for reads that no lease depends on (inspect, list, ping, release watches): a lease
   * session when one is open, otherwise one of its own whose granted timeout is whatever the server gives.
   */
  async any(): Promise<ZookeeperSession> {
    for (const pending of this.open.values()) {
      const session = await pending.catch(() => undefined);
      if (session && !session.ended) return session;
    }
    const reading = await this.reading?.catch(() => undefined);
    if (reading && !reading.ended) return reading;
    if (this.closed) throw unavailable('connect', '*', describeServers(this.settings.connect), 'the store was closed');
    const { connect, commandTimeoutMs } = this.settings;
    const pending = ZookeeperSession.open(this.zookeeper, connect, this.settings.sessionTimeoutMs ?? READER_SESSION_MS, commandTimeoutMs);
    this.reading = pending;
    const session = await pending;
    if (this.closed) await session.close();
    return session;
  }

  /** Ends every session: the ensemble deletes their nodes at once. Bounded (see `ZookeeperConnection.close`). */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.open.values(), ...(this.reading ? [this.reading] : [])];
    const sessions = await Promise.all(all.map((pending) => pending.catch(() => undefined)));
    this.open.clear();
    this.reading = undefined;
    await Promise.all(sessions.map((session) => session?.close()));
  }

  private async openChecked(timeoutMs: number): Promise<ZookeeperSession> {
    if (this.closed) throw unavailable('connect', '*', describeServers(this.settings.connect), 'the store was closed');
    const { connect, commandTimeoutMs } = this.settings;
    const session = await ZookeeperSession.open(this.zookeeper, connect, timeoutMs, commandTimeoutMs);
    if (this.closed) {
      await session.close();
      throw unavailable('connect', '*', session.servers, 'the store was closed');
    }
    if (session.timeoutMs === timeoutMs) return session;
    await session.close();
    // The server clamps the timeout to its minSessionTimeout / maxSessionTimeout (2 and 20 ticks stock).
    const granted = session.timeoutMs;
    const option = this.settings.sessionTimeoutMs === undefined ? 'leaseMs' : 'sessionTimeoutMs';
    const error = new LockConfigError(
      option,
      timeoutMs,
      `a session timeout the ZooKeeper server at ${session.servers} grants: asked ${timeoutMs} ms, it granted ${granted} ms ` +
        `(${granted > timeoutMs ? 'its minSessionTimeout is higher' : 'its maxSessionTimeout is lower'}); change ${option} or the server's bounds`,
    );
    this.refused.set(timeoutMs, error);
    throw error;
  }
}

/** What the reads-only session asks for: the stock client default. */
const READER_SESSION_MS = 10_000;
