import { settlesWithin } from '../../../support/settles-within.js';
import type { ZookeeperClient } from '../zookeeper-client.interface.js';
import { CONNECTION_STATE, type NodeZookeeperClientPackage, type RawClient } from './node-zookeeper-client.types.js';
import { watchReadTimeout } from './read-timeout.watch.js';
import { ZookeeperClientAdapter } from './zookeeper-client-adapter.js';

/**
 * The pause between two rounds over every member (random, up to this). The client's default (1 s) is as
 * long as the shortest session a server grants, so one unlucky round could cost a live session; 200 ms
 * keeps a stopped ensemble at a few connects a second per session.
 */
const SPIN_DELAY_MS = 200;
/** How long `close()` waits for the server to answer the session's close before destroying the socket. */
const CLOSE_WITHIN_MS = 1_000;

/** Why a connection ended: it is dead for good then (the client never revives an expired session). */
export type ConnectionEnd = 'expired' | 'closed' | 'authentication failed';

/**
 * One `node-zookeeper-client` client, from its first connect to a close that always finishes: its
 * session, its end, and the gaps of that client filled by hand (a read timeout, reconnect pacing that a
 * close cancels, a bounded close).
 */
export class ZookeeperConnection {
  readonly client: ZookeeperClient;
  private readonly ends = new Set<(end: ConnectionEnd) => void>();
  private readonly stopReadTimeout: () => void;
  private end?: ConnectionEnd;
  private spin?: NodeJS.Timeout;
  private closing?: Promise<void>;

  private constructor(private readonly raw: RawClient) {
    this.client = new ZookeeperClientAdapter(raw);
    this.paceReconnects();
    raw.connectionManager.on('state', (state) => {
      if (state === CONNECTION_STATE.SESSION_EXPIRED) this.ended('expired');
      else if (state === CONNECTION_STATE.AUTHENTICATION_FAILED) this.ended('authentication failed');
      else if (state === CONNECTION_STATE.CLOSED) this.ended('closed');
    });
    this.stopReadTimeout = watchReadTimeout(raw.connectionManager);
  }

  /**
   * Connects asking for a session of `sessionTimeoutMs`; rejects (with the reason as its message) when
   * none is granted within `withinMs`, after closing the client.
   */
  static open(zookeeper: NodeZookeeperClientPackage, connect: string, sessionTimeoutMs: number, withinMs: number): Promise<ZookeeperConnection> {
    // `retries: 0`: a request the client sent again after a lost connection may have landed the first
    // time (a second contender node); the store decides what an unknown outcome needs.
    const connection = new ZookeeperConnection(zookeeper.createClient(connect, { sessionTimeout: sessionTimeoutMs, spinDelay: SPIN_DELAY_MS, retries: 0 }));
    const manager = connection.raw.connectionManager;
    return new Promise<ZookeeperConnection>((resolve, reject) => {
      const fail = (reason: string): void => {
        clearTimeout(timer);
        manager.removeListener('state', onState);
        void connection.close().then(() => reject(new Error(reason)));
      };
      const onState = (state: number): void => {
        if (state === CONNECTION_STATE.CONNECTED) {
          clearTimeout(timer);
          manager.removeListener('state', onState);
          resolve(connection);
        } else if (connection.end) fail(connection.end === 'closed' ? 'the session closed' : connection.end === 'expired' ? 'the session expired' : connection.end);
      };
      const timer = setTimeout(() => fail(`no session within ${withinMs} ms`), withinMs);
      timer.unref();
      manager.on('state', onState);
      connection.raw.connect();
    });
  }

  /** Calls `listener` once when the connection ends (at once if it has). Returns the unsubscribe. */
  whenEnded(listener: (end: ConnectionEnd) => void): () => void {
    if (this.end) {
      listener(this.end);
      return () => undefined;
    }
    this.ends.add(listener);
    return () => this.ends.delete(listener);
  }

  /**
   * Closes the session (the ensemble deletes its ephemeral nodes at once) and always finishes: the
   * client's close waits for the server's answer, which a stopped or unreachable ensemble never gives,
   * so after `CLOSE_WITHIN_MS` the socket is destroyed. Either way no socket, timer or listener of this
   * client stays behind. Never rejects.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    const manager = this.raw.connectionManager;
    this.stopReadTimeout();
    clearTimeout(this.spin);
    const live = manager.state === CONNECTION_STATE.CONNECTED || manager.state === CONNECTION_STATE.CONNECTED_READ_ONLY;
    if (!this.end) {
      const closed = new Promise<void>((resolve) => this.whenEnded(() => resolve()));
      try {
        // CLOSING: no reconnect after this; the close request goes out if a connection is up.
        this.raw.close();
      } catch {
        // The client refused to queue it (no socket yet): the socket goes below.
      }
      if (live) await settlesWithin(closed, CLOSE_WITHIN_MS);
    }
    clearTimeout(this.spin);
    if (manager.connectTimeoutHandler) clearTimeout(manager.connectTimeoutHandler);
    manager.socket?.destroy();
    this.ended('closed');
    this.raw.removeAllListeners();
  }

  /**
   * The client's own pause between rounds over the members is a timer nothing can cancel, and its end
   * opens a socket even after `close()`: pace the rounds here instead, on a timer the close clears, with
   * the client's own rotation otherwise.
   */
  private paceReconnects(): void {
    const manager = this.raw.connectionManager;
    manager.findNextServer = (callback) => {
      manager.nextServerIndex %= manager.servers.length;
      const next = (): void => {
        if (this.closing || this.end) return;
        callback(manager.servers[manager.nextServerIndex]);
        manager.nextServerIndex += 1;
      };
      if (manager.serverAttempts < manager.servers.length) {
        manager.serverAttempts += 1;
        return void process.nextTick(next);
      }
      this.spin = setTimeout(() => {
        manager.serverAttempts = 0;
        next();
      }, Math.random() * SPIN_DELAY_MS);
    };
  }

  private ended(end: ConnectionEnd): void {
    if (this.end) return;
    this.end = end;
    // An expired session is dropped by the store without a close: its timers stop here.
    this.stopReadTimeout();
    clearTimeout(this.spin);
    for (const listener of [...this.ends]) listener(end);
    this.ends.clear();
  }
}
