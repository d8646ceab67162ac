import { ChannelSubscriptions } from '../../support/channel-subscriptions.js';
import { settlesWithin } from '../../support/settles-within.js';
import type { PostgresListenClient } from './postgres-connection.interface.js';
import { listenStatement } from './postgres-lock-table.js';
import { destroySocket } from './postgres-shutdown.js';

const MIN_RECONNECT_MS = 100;
const MAX_RECONNECT_MS = 5_000;

/**
 * Wake-ups for waiters over ONE dedicated connection per store (not a pooled one: LISTEN is session state,
 * and a pool or PgBouncer would hand the session to someone else). A key's channel is listened to while at
 * least one local waiter waits on it, so the connection's traffic follows contention.
 *
 * When the connection drops (server restart, failover, `pg_terminate_backend`, a proxy), it is reopened in
 * the background with a growing delay while anyone is listening, every channel is listened to again, and
 * every listener is woken once: a release during the gap was never heard. Meanwhile waiters fall back to
 * their jittered backoff, so a lost connection costs latency, never correctness.
 */
export class PostgresReleaseListener {
  private client?: PostgresListenClient;
  private connecting?: Promise<PostgresListenClient>;
  /** The client `connect()` is opening: close() must end it too, or it connects after the store closed. */
  private opening?: PostgresListenClient;
  private readonly discarded = new WeakSet<PostgresListenClient>();
  private readonly subscriptions = new ChannelSubscriptions<() => void>({
    subscribe: (channel) => this.command(listenStatement(channel)),
    // Only on a live connection (a new one never listened to it).
    unsubscribe: (channel) => {
      this.enqueue(async () => {
        if (!this.subscriptions.has(channel)) await this.client?.query(listenStatement(channel, 'UNLISTEN'));
      }).catch(() => undefined);
    },
  });
  private interrupted = false;
  private reconnectTimer?: NodeJS.Timeout;
  private reconnectDelayMs = MIN_RECONNECT_MS;
  private closed = false;
  /** LISTEN/UNLISTEN go one at a time, in order (node-postgres deprecates overlapping queries on a client). */
  private serial: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly open: () => PostgresListenClient,
    /** How long ending a connection may take before its socket is destroyed (the store's `commandTimeoutMs`). */
    private readonly endWithinMs: number,
  ) {}

  /** Resolves once the channel is listened to, with the function that stops this listener. */
  async listen(channel: string, listener: () => void): Promise<() => void> {
    if (this.closed) throw new Error('the lock store is closed');
    return this.subscriptions.listen(channel, listener);
  }

  /** Ends the connection (and one being opened) within the bound, whether or not the server answers. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.subscriptions.clear();
    const clients = [this.client, this.opening].filter((client): client is PostgresListenClient => client !== undefined);
    this.client = undefined;
    await Promise.all(clients.map((client) => this.discard(client)));
  }

  private command(statement: string): Promise<void> {
    return this.enqueue(async () => {
      const client = await this.connected();
      await client.query(statement);
    });
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.serial.then(work);
    this.serial = next.catch(() => undefined);
    return next;
  }

  private connected(): Promise<PostgresListenClient> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<PostgresListenClient> {
    const client = this.open();
    this.opening = client;
    client.on('notification', ({ channel }) => {
      for (const listener of this.subscriptions.listenersOf(channel)) listener();
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      if (this.closed) throw new Error('the lock store is closed');
      const resumed = this.interrupted ? this.subscriptions.names() : [];
      // One simple-protocol message, several statements: one round trip however many keys are waited on.
      if (resumed.length > 0) await client.query(resumed.map((channel) => listenStatement(channel)).join('; '));
    } catch (error) {
      await this.discard(client);
      throw error;
    } finally {
      this.opening = undefined;
    }
    this.client = client;
    this.reconnectDelayMs = MIN_RECONNECT_MS;
    if (this.interrupted) {
      this.interrupted = false;
      for (const listener of this.subscriptions.everyListener()) listener();
    }
    return client;
  }

  private lost(client: PostgresListenClient): void {
    if (this.client !== client) return;
    this.client = undefined;
    void this.discard(client);
    this.interrupted = this.subscriptions.size > 0;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer || this.subscriptions.size === 0) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connected().catch(() => {
        this.reconnectDelayMs = Math.min(MAX_RECONNECT_MS, this.reconnectDelayMs * 2);
        this.scheduleReconnect();
      });
    }, this.reconnectDelayMs);
    this.reconnectTimer.unref();
  }

  /**
   * Ends a client we no longer use; its late errors are expected and ignored. `end()` says goodbye and
   * waits for the socket to close, which a server that stopped answering never lets happen: past the
   * bound, the socket is destroyed.
   */
  private async discard(client: PostgresListenClient): Promise<void> {
    // close() and a failing connect() may both discard the client being opened: a second end() would
    // wait for an 'end' that already came.
    if (this.discarded.has(client)) return;
    this.discarded.add(client);
    client.removeAllListeners();
    client.on('error', () => undefined);
    if (!(await settlesWithin(client.end(), this.endWithinMs))) destroySocket(client);
  }
}
