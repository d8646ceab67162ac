/** ZooKeeper's return codes the protocol tells apart (`node-zookeeper-client`'s `Exception` codes). */
export const ZK = {
  CONNECTIONLOSS: -4,
  OPERATIONTIMEOUT: -7,
  NONODE: -101,
  BADVERSION: -103,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
} as const;

/**
 * Node modes (`CreateMode`). No container mode: that client has none (and no TTL nodes), so a lock's parent
 * is persistent and the store deletes it once empty (`nodes/lock-parent.node.ts`).
 */
export const CREATE = { PERSISTENT: 0, EPHEMERAL_SEQUENTIAL: 3 } as const;

/**
 * A reply the server gave about a node (no such node, it exists, another version, it has children): part
 * of the protocol, never an outage. Everything else a call can end in (connection loss, session expiry,
 * a timeout) is a `LockStoreUnavailableError`.
 */
export class ZookeeperNodeError extends Error {
  constructor(
    readonly rc: number,
    message: string,
  ) {
    super(message);
    this.name = 'ZookeeperNodeError';
  }
}

const NODE_REPLIES = new Set<number>([ZK.NONODE, ZK.BADVERSION, ZK.NODEEXISTS, ZK.NOTEMPTY]);

/** The return code of a failed call: the `code` of the client's `Exception` (`Exception: NO_NODE[-101]@/path`). */
export function returnCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** A node reply as a {@link ZookeeperNodeError}, or undefined for a failure of the call itself. */
export function nodeReplyOf(error: unknown): ZookeeperNodeError | undefined {
  const rc = returnCodeOf(error);
  return rc !== undefined && NODE_REPLIES.has(rc) ? new ZookeeperNodeError(rc, (error as Error).message) : undefined;
}

export function isNodeReply(error: unknown, rc: number): boolean {
  return error instanceof ZookeeperNodeError && error.rc === rc;
}
