/**
 * What the store uses of the `zookeeper` package's promise client (`ZooKeeperPromise`). Typed here, not
 * imported, on purpose: the package is an optional peer, and the library's types must compile in
 * applications that never installed it.
 */
export interface ZookeeperStat {
  readonly czxid: number;
  readonly version: number;
  /** The session that owns an ephemeral node, in hex ('0' for a persistent one). */
  readonly ephemeralOwner: string;
}

export type ZookeeperWatcher = (type: number, state: number, path: string) => void;

export interface ZookeeperClient {
  /** The negotiated session timeout (ms), once connected. */
  readonly timeout: number;
  /** The session id. */
  readonly client_id: string;
  init(config: Record<string, unknown>): unknown;
  on(event: 'connect' | 'connecting' | 'close', listener: (...args: unknown[]) => void): unknown;
  removeAllListeners(): unknown;
  close(): unknown;
  create(path: string, data: string, flags: number): Promise<string>;
  exists(path: string, watch: boolean): Promise<ZookeeperStat | null | undefined>;
  get(path: string, watch: boolean): Promise<[ZookeeperStat, Buffer | string | null]>;
  w_get(path: string, watcher: ZookeeperWatcher): Promise<[ZookeeperStat, Buffer | string | null]>;
  get_children(path: string, watch: boolean): Promise<string[]>;
  w_get_children(path: string, watcher: ZookeeperWatcher): Promise<string[]>;
  set(path: string, data: string, version: number): Promise<ZookeeperStat>;
  delete_(path: string, version: number): Promise<unknown>;
}
