import type { Socket } from 'node:net';

/**
 * What the store uses of `node-zookeeper-client` 1.1 (pure JavaScript, callback API), typed here rather
 * than imported from `@types/node-zookeeper-client`: the package is an optional peer, and the library's
 * types must compile in applications that never installed it. The connection manager's fields are not
 * in those types at all; the adapter reaches them to fill the client's gaps (a read timeout, a bounded
 * close, reconnect pacing that close can cancel), so their names are the 1.1.3 source's.
 */
export interface RawStat {
  /** A jute `long`: 8 bytes, big-endian. */
  readonly czxid: Buffer;
  readonly version: number;
  /** A jute `long`: the owning session's id, zero for a persistent node. */
  readonly ephemeralOwner: Buffer;
}

/** The package's `Exception`: `code` is ZooKeeper's return code (`NO_NODE` -101, `CONNECTION_LOSS` -4, …). */
export interface RawException extends Error {
  readonly code: number;
}

export type RawWatcher = (event: { readonly type: number; readonly path: string }) => void;

/** `ConnectionManager.STATES` of the package (not the `State` objects the client emits). */
export const CONNECTION_STATE = {
  DISCONNECTED: 0,
  CONNECTING: 1,
  CONNECTED: 2,
  CONNECTED_READ_ONLY: 3,
  CLOSING: -1,
  CLOSED: -2,
  SESSION_EXPIRED: -3,
  AUTHENTICATION_FAILED: -4,
} as const;

export interface RawConnectionManager {
  state: number;
  /** The current socket; replaced at every (re)connect. */
  socket?: Socket;
  /** Session timeout / number of servers: the bound of one TCP connect (the client clears it once connected). */
  readonly connectTimeout: number;
  connectTimeoutHandler: NodeJS.Timeout | null;
  /** Picks the next member, after a random pause of up to `spinDelay` once every member was tried. */
  findNextServer: (callback: (server: unknown) => void) => void;
  readonly servers: readonly unknown[];
  nextServerIndex: number;
  serverAttempts: number;
  getSessionTimeout(): number;
  on(event: 'state', listener: (state: number) => void): unknown;
  removeListener(event: 'state', listener: (state: number) => void): unknown;
}

export interface RawClient {
  readonly connectionManager: RawConnectionManager;
  connect(): void;
  close(): void;
  getSessionId(): Buffer;
  getSessionTimeout(): number;
  removeAllListeners(): unknown;
  create(path: string, data: Buffer, mode: number, callback: (error: RawException | null, path: string) => void): void;
  remove(path: string, version: number, callback: (error: RawException | null) => void): void;
  setData(path: string, data: Buffer, version: number, callback: (error: RawException | null, stat: RawStat) => void): void;
  getData(path: string, watcher: RawWatcher | undefined, callback: (error: RawException | null, data: Buffer | undefined, stat: RawStat) => void): void;
  exists(path: string, watcher: RawWatcher | undefined, callback: (error: RawException | null, stat: RawStat | null) => void): void;
  getChildren(path: string, watcher: RawWatcher | undefined, callback: (error: RawException | null, children: string[]) => void): void;
}

export interface RawClientOptions {
  readonly sessionTimeout: number;
  readonly spinDelay: number;
  readonly retries: number;
}

/** The package's module object. */
export interface NodeZookeeperClientPackage {
  createClient(connectionString: string, options: RawClientOptions): RawClient;
}
