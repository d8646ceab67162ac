/** ZooKeeper's return codes the protocol tells apart (the C client's `ZOO_ERRORS`). */
export const ZK = {
  CONNECTIONLOSS: -4,
  OPERATIONTIMEOUT: -7,
  NONODE: -101,
  BADVERSION: -103,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
} as const;

/** Node flags (`CreateMode`). */
export const CREATE = { PERSISTENT: 0, EPHEMERAL_SEQUENTIAL: 3, CONTAINER: 4 } as const;

/**
 * A reply the server gave about a node (no such node, it exists, another version): part of the protocol,
 * never an outage. Everything else a call can end in (connection loss, session expiry, a timeout) is a
 * `LockStoreUnavailableError`.
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

/**
 * The return code in one of the `zookeeper` package's errors: `"-101 no node"` for a call the server
 * answered, `fn: "…" args: "…" result: "ZINVALIDSTATE -9"` for one the client refused to send.
 */
export function returnCodeOf(error: unknown): number | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const answered = /^(-?\d+) /.exec(message);
  if (answered) return Number(answered[1]);
  const refused = /result: "\w+ (-?\d+)"/.exec(message);
  return refused ? Number(refused[1]) : undefined;
}

/** A node reply as a {@link ZookeeperNodeError}, or undefined for a failure of the call itself. */
export function nodeReplyOf(error: unknown): ZookeeperNodeError | undefined {
  const rc = returnCodeOf(error);
  return rc !== undefined && NODE_REPLIES.has(rc) ? new ZookeeperNodeError(rc, (error as Error).message) : undefined;
}

export function isNodeReply(error: unknown, rc: number): boolean {
  return error instanceof ZookeeperNodeError && error.rc === rc;
}
