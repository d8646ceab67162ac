/**
 * What the store needs of a ZooKeeper client, as promises (`client/zookeeper-client-adapter.ts` builds it
 * on `node-zookeeper-client`). A rejection carries ZooKeeper's return code as `code`; `zookeeper-reply.ts`
 * tells node replies (no node, exists, bad version, not empty) from unknown outcomes.
 */
export interface ZookeeperStat {
  /** The zxid of the write that created the node, exactly (the fencing token). */
  readonly czxid: number;
  readonly version: number;
  /** The session that owns an ephemeral node, in hex ('0' for a persistent one). */
  readonly ephemeralOwner: string;
}

/** A one-shot watch: called once, at the next change the watch was set for. */
export type ZookeeperWatcher = () => void;

export interface ZookeeperClient {
  /** The session id, in hex. */
  readonly sessionId: string;
  /** The negotiated session timeout (ms), once connected. */
  readonly sessionTimeoutMs: number;
  /** Creates a node of `mode` (`CREATE` in zookeeper-reply.ts); resolves with its path (a sequential node's, suffix included). */
  create(path: string, data: string, mode: number): Promise<string>;
  /** The node's stat, null when there is none; `watcher` fires at its creation, change or deletion. */
  exists(path: string, watcher?: ZookeeperWatcher): Promise<ZookeeperStat | null>;
  /** `watcher` fires at the node's next value change or its deletion. */
  getData(path: string, watcher?: ZookeeperWatcher): Promise<{ readonly stat: ZookeeperStat; readonly data: Buffer | undefined }>;
  /** `watcher` fires at the next child created or deleted, or the node's deletion. */
  getChildren(path: string, watcher?: ZookeeperWatcher): Promise<string[]>;
  setData(path: string, data: string, version: number): Promise<ZookeeperStat>;
  /** Deletes the node if its version is `version` (-1: any). */
  remove(path: string, version: number): Promise<void>;
}
