import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './redis-client.js';
import { settlesWithin } from '../../../support/settles-within.js';

export interface RedisConnectionFlags {
  /** False when the user handed the client in: then closing it is theirs to do. */
  readonly owned: boolean;
  /** Subscribers use SSUBSCRIBE (on a Cluster: one per node, ioredis `shardedSubscribers`). */
  readonly sharded: boolean;
  readonly closeTimeoutMs: number;
}

/** Raised when a command was never sent because the client could not get ready: it certainly did not run. */
export class NotSentError extends Error {
  override readonly name = 'NotSentError';
}

/**
 * The store's command connection (a Redis, a Sentinel-backed Redis or a Cluster) and what the store needs to
 * know about it besides sending commands:
 * - its **epoch**, bumped whenever a socket of it closes: ioredis re-sends commands that were unanswered when
 *   a connection dropped, so a reply that arrives in a later epoch may answer a second delivery;
 * - the last **connection error** it reported, so a failure can say why ("connect ECONNREFUSED") instead of
 *   ioredis' "Reached the max retries per request limit";
 * - **readiness** for clients built with `enableOfflineQueue: false`, which reject a command sent while
 *   (re)connecting instead of queuing it;
 * - the **server** a key's commands go to, named host:port, never with credentials.
 */
export class RedisConnection {
  private epochValue = 0;
  private lastError?: Error;
  private readonly detach: Array<() => void> = [];
  private readonly queuesOffline: boolean;

  constructor(
    readonly client: RedisClient,
    private readonly flags: RedisConnectionFlags,
  ) {
    const bump = (): void => {
      this.epochValue++;
    };
    const remember = (error: Error): void => {
      this.lastError = error;
    };
    this.listen(client, 'close', bump);
    if (client.isCluster) {
      const watchNode = (node: Redis): void => this.listen(node, 'close', bump);
      for (const node of (client as Cluster).nodes('all')) watchNode(node);
      this.listen(client, '+node', watchNode);
      this.listen(client, 'node error', remember);
    }
    // An 'error' listener silences ioredis' "Unhandled error event" print: only on connections we own.
    if (flags.owned) {
      this.listen(client, 'error', remember);
      reviveOnUnexpectedEnd(client);
    }
    this.queuesOffline = client.options.enableOfflineQueue !== false;
  }

  get sharded(): boolean {
    return this.flags.sharded;
  }

  /** How long a close waits for QUIT before cutting the socket (see {@link RedisConnection.close}). */
  get closeTimeoutMs(): number {
    return this.flags.closeTimeoutMs;
  }

  /** Changes whenever a socket of this connection closed since (see the class comment). */
  get epoch(): number {
    return this.epochValue;
  }

  get lastConnectionError(): Error | undefined {
    return this.lastError;
  }

  /** A second connection for SUBSCRIBE (or SSUBSCRIBE), with the same options. */
  openSubscriber(): RedisClient {
    const { client } = this;
    const cluster = client as Cluster;
    const subscriber =
      client.isCluster && this.flags.sharded && !cluster.options.shardedSubscribers
        ? cluster.duplicate([], { shardedSubscribers: true })
        : client.duplicate();
    subscriber.on('error', ignore);
    reviveOnUnexpectedEnd(subscriber);
    return subscriber;
  }

  /**
   * Resolves once a command can be sent: at once for clients that queue commands while connecting (the
   * ioredis default), otherwise when the client is ready (connecting it if it is lazy), within `timeoutMs`.
   * Undefined when nothing needs waiting for, so the common path costs no promise.
   */
  whenReady(timeoutMs: number): Promise<void> | undefined {
    const { client } = this;
    if (this.queuesOffline || client.status === 'ready') return undefined;
    if (client.status === 'end') return Promise.reject(new NotSentError('the connection was closed'));
    return new Promise<void>((resolve, reject) => {
      const onReady = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        client.off('ready', onReady);
        const why = this.lastError ? `: ${this.lastError.message}` : '';
        reject(new NotSentError(`not connected within ${timeoutMs} ms${why}`));
      }, timeoutMs);
      timer.unref();
      client.once('ready', onReady);
      if (client.status === 'wait') client.connect().catch(ignore);
    });
  }

  /**
   * Where commands for `lockKey` go: `host:port`, the Cluster node serving its slot, or the Sentinel group.
   * Never the URL: it may carry credentials.
   */
  server(lockKey?: string): string {
    const { client } = this;
    if (client.isCluster) {
      const cluster = client as Cluster;
      const node = lockKey === undefined ? undefined : cluster.slots[calculateSlot(lockKey)]?.[0];
      if (node) return `${node} (Redis Cluster)`;
      const seeds = (cluster as unknown as { startupNodes: Array<string | { host?: string; port?: number }> }).startupNodes;
      return `Redis Cluster (seeds ${seeds.map(describeSeed).join(', ')})`;
    }
    const options = (client as Redis).options;
    if (options.sentinels) {
      const stream = (client as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream;
      const at = stream?.remoteAddress ? ` at ${stream.remoteAddress}:${stream.remotePort}` : '';
      const sentinels = options.sentinels.map((s) => `${s.host ?? 'localhost'}:${s.port ?? 26379}`).join(', ');
      return `Sentinel primary "${options.name}"${at} (sentinels ${sentinels})`;
    }
    return options.path ?? `${options.host ?? 'localhost'}:${options.port ?? 6379}`;
  }

  /**
   * QUIT, bounded: a server that is blackholed or stopped never answers it, so after `closeTimeoutMs` the
   * socket is cut. disconnect() always follows, since QUIT alone leaves the failover detector's sentinel
   * connections open. A client handed in by the user is left open; only our listeners are removed.
   */
  async close(): Promise<void> {
    for (const detach of this.detach.splice(0)) detach();
    if (!this.flags.owned) return;
    // A connection refused or reset while it closes is expected: without a listener ioredis prints every
    // such error as "Unhandled error event".
    this.client.on('error', ignore);
    await closeRedisClient(this.client, this.flags.closeTimeoutMs);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- event listeners of several signatures
  private listen(emitter: RedisClient | Redis, event: string, listener: (...args: any[]) => void): void {
    emitter.on(event, listener);
    this.detach.push(() => emitter.off(event, listener));
  }
}

/** Clients being closed on purpose: their 'end' is final. A WeakSet, so it holds nothing alive. */
const closing = new WeakSet<RedisClient>();

/** How soon a client that ended by accident reconnects. */
const REVIVE_DELAY_MS = 100;

/**
 * ioredis can end a Sentinel client for good in the middle of a failover: when the failover detector fires
 * while the client is already reconnecting, the reconnection attempt is aborted with "Connection is closed"
 * and the client's status becomes 'end' (the symptom of ioredis issue #1683), so every later command fails.
 * A Sentinel connection the library owns is never meant to end before close(): when one does, it reconnects.
 */
function reviveOnUnexpectedEnd(client: RedisClient): void {
  if (client.isCluster || !(client as Redis).options.sentinels) return;
  client.on('end', () => {
    if (closing.has(client)) return;
    setTimeout(() => {
      if (!closing.has(client) && client.status === 'end') client.connect().catch(ignore);
    }, REVIVE_DELAY_MS).unref();
  });
}

/** Closes a connection within `timeoutMs` whatever the server does (see {@link RedisConnection.close}). */
export async function closeRedisClient(client: RedisClient, timeoutMs: number): Promise<void> {
  closing.add(client);
  // QUIT only where it can be answered: a client still connecting or waiting to reconnect (a server that
  // refuses) has nobody to say goodbye to, and its pending reconnect timer must not outlive close().
  if (client.status === 'ready') await settlesWithin(client.quit(), timeoutMs);
  client.disconnect();
  // A socket still connecting (to a server that does not answer) is cut, not left to its connect timeout.
  (client as unknown as { stream?: { destroy(): void } }).stream?.destroy();
}

/** A seed as host:port: never its user-info, which ends at the last `@` before the host, as ioredis reads it. */
function describeSeed(seed: string | { host?: string; port?: number }): string {
  if (typeof seed !== 'string') return `${seed.host ?? 'localhost'}:${seed.port ?? 6379}`;
  try {
    const { host } = new URL(/^rediss?:\/\//.test(seed) ? seed : `redis://${seed}`);
    return host || '***';
  } catch {
    return '***';
  }
}

function ignore(): void {}
