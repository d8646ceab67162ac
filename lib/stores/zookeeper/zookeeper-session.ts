import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { ZookeeperConnection } from './client/zookeeper-connection.js';
import type { ZookeeperClient } from './zookeeper-client.interface.js';
import type { ZookeeperPackage } from './zookeeper.loader.js';
import { nodeReplyOf, returnCodeOf, ZK } from './zookeeper-reply.js';

/**
 * One ZooKeeper session: the lease of every node it creates. The ensemble deletes those nodes when it has
 * heard nothing from the session for its negotiated timeout; the store's renewals are requests on the
 * session, so each answer proves the session was alive when the server handled it. A session that
 * expired (or was closed) is dead for good: the store opens another for later acquisitions.
 */
export class ZookeeperSession {
  private dead = false;
  private readonly onEnd = new Set<() => void>();

  private constructor(
    private readonly connection: ZookeeperConnection,
    /** `host:port,…` for error messages. */
    readonly servers: string,
    private readonly commandTimeoutMs: number,
  ) {
    connection.whenEnded(() => this.end());
  }

  /** Opens a session asking for `timeoutMs`; rejects with `LockStoreUnavailableError` when none is granted within the command timeout. */
  static async open(zookeeper: ZookeeperPackage, connect: string, timeoutMs: number, commandTimeoutMs: number): Promise<ZookeeperSession> {
    const servers = describeServers(connect);
    try {
      return new ZookeeperSession(await ZookeeperConnection.open(zookeeper, connect, timeoutMs, commandTimeoutMs), servers, commandTimeoutMs);
    } catch (error) {
      throw unavailable('connect', '*', servers, (error as Error).message);
    }
  }

  /** The session timeout the server granted (it clamps the request to its min/max). */
  get timeoutMs(): number {
    return this.connection.client.sessionTimeoutMs;
  }

  /** The session id, in hex (as an ephemeral node's `ephemeralOwner`). */
  get id(): string {
    return this.connection.client.sessionId;
  }

  /** True once the session expired or was closed: its ephemeral nodes are gone, or going. */
  get ended(): boolean {
    return this.dead;
  }

  /** Calls `listener` once when the session ends; returns the unsubscribe. */
  whenEnded(listener: () => void): () => void {
    if (this.dead) {
      listener();
      return () => undefined;
    }
    this.onEnd.add(listener);
    return () => this.onEnd.delete(listener);
  }

  /**
   * Runs one request with the per-command timeout (the client has none of its own: a request sent to a
   * member that stopped answering, or queued while no member is reachable, would wait forever). A node
   * reply (no node, exists, bad version, not empty) rejects with `ZookeeperNodeError`; everything else
   * (connection loss, session expiry, no answer in time) with a `LockStoreUnavailableError` naming the
   * servers and the reason: the outcome is unknown. A session that ends meanwhile ends the call at once.
   */
  call<T>(operation: string, key: string, send: (client: ZookeeperClient) => Promise<T>): Promise<T> {
    if (this.dead) return Promise.reject(unavailable(operation, key, this.servers, 'the session expired'));
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const finish = (error: unknown, value?: T): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        stopWatching();
        if (error === undefined) return resolve(value as T);
        const reply = nodeReplyOf(error);
        if (reply) return reject(reply);
        if (returnCodeOf(error) === ZK.SESSIONEXPIRED) this.end();
        reject(unavailable(operation, key, this.servers, reasonOf(error)));
      };
      const timer = setTimeout(() => finish(new Error(`no answer within ${this.commandTimeoutMs} ms`)), this.commandTimeoutMs);
      timer.unref();
      const stopWatching = this.whenEnded(() => finish(Object.assign(new Error('the session expired'), { code: ZK.SESSIONEXPIRED })));
      try {
        send(this.connection.client).then(
          (value) => finish(undefined, value),
          (error: unknown) => finish(error ?? new Error('rejected')),
        );
      } catch (error) {
        finish(error);
      }
    });
  }

  /** Ends the session: the ensemble deletes its ephemeral nodes at once. Bounded, never rejects. */
  close(): Promise<void> {
    this.end();
    return this.connection.close();
  }

  private end(): void {
    if (this.dead) return;
    this.dead = true;
    for (const listener of [...this.onEnd]) listener();
    this.onEnd.clear();
  }
}

export function unavailable(operation: string, key: string, servers: string, reason: string): LockStoreUnavailableError {
  return new LockStoreUnavailableError(operation, key, { cause: new Error(`ZooKeeper at ${servers}: ${reason}`) });
}

/** The servers of a connect string, without its chroot. */
export function describeServers(connect: string): string {
  return connect.split('/')[0] || 'ZooKeeper';
}

function reasonOf(error: unknown): string {
  const rc = returnCodeOf(error);
  if (rc === ZK.CONNECTIONLOSS) return 'connection lost';
  if (rc === ZK.SESSIONEXPIRED) return 'the session expired';
  if (rc === ZK.OPERATIONTIMEOUT) return 'the operation timed out';
  return error instanceof Error ? error.message : String(error);
}
