import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type { ZookeeperClient } from './zookeeper-client.interface.js';
import type { ZookeeperPackage } from './zookeeper.loader.js';
import { nodeReplyOf, returnCodeOf, ZK } from './zookeeper-reply.js';

/** The C client's session states (`zoo_state`). */
const EXPIRED_SESSION_STATE = -112;
const AUTH_FAILED_STATE = -113;

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
    private readonly client: ZookeeperClient,
    /** `host:port,…` for error messages. */
    readonly servers: string,
    private readonly commandTimeoutMs: number,
  ) {
    client.on('close', () => this.end());
  }

  /** Opens a session asking for `timeoutMs`; rejects with `LockStoreUnavailableError` when none is granted in time. */
  static open(zookeeper: ZookeeperPackage, connect: string, timeoutMs: number, commandTimeoutMs: number): Promise<ZookeeperSession> {
    const client = new zookeeper({
      connect,
      timeout: timeoutMs,
      // The C client's own log goes to stderr per reconnect attempt; the store reports outages itself.
      debug_level: 0,
      host_order_deterministic: false,
    });
    const servers = describeServers(connect);
    return new Promise<ZookeeperSession>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.removeAllListeners();
        client.close();
        reject(unavailable('connect', '*', servers, `no session within ${commandTimeoutMs} ms`));
      }, commandTimeoutMs);
      timer.unref();
      client.on('connect', () => {
        clearTimeout(timer);
        resolve(new ZookeeperSession(client, servers, commandTimeoutMs));
      });
      client.on('close', (_client: unknown, state: unknown) => {
        clearTimeout(timer);
        reject(unavailable('connect', '*', servers, state === AUTH_FAILED_STATE ? 'authentication failed' : 'the session closed'));
      });
      client.init({});
    });
  }

  /** The session timeout the server granted (it clamps the request to its min/max). */
  get timeoutMs(): number {
    return this.client.timeout;
  }

  get id(): string {
    return String(this.client.client_id);
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
   * Runs one request with the per-command timeout. A node reply (no node, exists, bad version) rejects
   * with `ZookeeperNodeError`; everything else (connection loss, session expiry, no answer in time) with
   * a `LockStoreUnavailableError` naming the servers and the reason: the outcome is unknown.
   */
  call<T>(operation: string, key: string, send: (client: ZookeeperClient) => Promise<T>): Promise<T> {
    if (this.dead) return Promise.reject(unavailable(operation, key, this.servers, 'the session expired'));
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const finish = (error: unknown, value?: T): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (error === undefined) return resolve(value as T);
        const reply = nodeReplyOf(error);
        if (reply) return reject(reply);
        if (returnCodeOf(error) === ZK.SESSIONEXPIRED) this.end();
        reject(unavailable(operation, key, this.servers, reasonOf(error)));
      };
      const timer = setTimeout(() => finish(new Error(`no answer within ${this.commandTimeoutMs} ms`)), this.commandTimeoutMs);
      timer.unref();
      try {
        send(this.client).then(
          (value) => finish(undefined, value),
          (error: unknown) => finish(error ?? new Error('rejected')),
        );
      } catch (error) {
        finish(error);
      }
    });
  }

  /** Ends the session: the ensemble deletes its ephemeral nodes at once. */
  close(): void {
    if (this.dead) return;
    this.end();
    this.client.close();
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
  if (rc === ZK.SESSIONEXPIRED || rc === EXPIRED_SESSION_STATE) return 'the session expired';
  return error instanceof Error ? error.message : String(error);
}
