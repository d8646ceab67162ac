import type { RedisClient } from '../connection/redis-client.js';
import type { LuaScript } from '../scripts/redis-script.js';

/** ioredis flattens array arguments into the command; its typings only know the spread form. */
interface FlatArgs {
  evalsha(sha: string, numKeys: number, keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(lua: string, numKeys: number, keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** What the replicas' acknowledgement asks: `WAIT replicas timeoutMs` (see {@link sendScript}). */
export interface Acknowledgement {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/**
 * Sends a script: by SHA (`bySha`), or as EVAL, which both answers and caches it on a server that had not
 * seen it (the one fallback, in `CommandCall.failed`). With `acknowledgement`, `WAIT replicas timeoutMs`
 * follows on the same connection (one pipeline, so on a Cluster both go to the node of the first key): how
 * many replicas have the script's writes, as Redisson's synced writes ask. WAIT cannot run inside a
 * script, and on another connection it would wait for that connection's writes, not these. The
 * pipeline's results are read by {@link acknowledgedReply}.
 */
export function sendScript(
  client: RedisClient,
  build: LuaScript,
  numKeys: number,
  keysAndArgs: (string | number)[],
  bySha: boolean,
  acknowledgement: Acknowledgement | undefined,
  asking = false,
): Promise<unknown> {
  if (!acknowledgement) {
    const flat = client as unknown as FlatArgs;
    return bySha ? flat.evalsha(build.sha, numKeys, keysAndArgs) : flat.eval(build.lua, numKeys, keysAndArgs);
  }
  const pipeline = client.pipeline();
  // Sent straight to the node importing the slot (see `clusterRedirect`): ASKING lets it serve this once.
  if (asking) pipeline.asking();
  const flat = pipeline as unknown as FlatArgs;
  if (bySha) flat.evalsha(build.sha, numKeys, keysAndArgs);
  else flat.eval(build.lua, numKeys, keysAndArgs);
  pipeline.wait(acknowledgement.replicas, acknowledgement.timeoutMs);
  const results = pipeline.exec();
  return asking ? results.then((all) => all?.slice(1)) : results;
}

/**
 * A Cluster node's answer that it cannot run the script: the key's slot is served elsewhere, for good
 * (MOVED) or for now (ASK), or it is mid-migration with the script's keys split between two nodes
 * (TRYAGAIN: the same node again, a moment later).
 */
export type ClusterRedirect =
  | { readonly kind: 'MOVED' | 'ASK'; /** `host:port`, as the cluster announces it. */ readonly node: string }
  | { readonly kind: 'TRYAGAIN' };

/**
 * The redirect in a pipeline's script error. ioredis follows a Cluster pipeline's MOVED, ASK or TRYAGAIN
 * only when every command in it got the same one; WAIT names no key and always succeeds, so an
 * acknowledged write's redirect comes back as its error, and `CommandCall` follows it itself.
 */
export function clusterRedirect(error: unknown): ClusterRedirect | undefined {
  if (!(error instanceof Error) || error.name !== 'ReplyError') return undefined;
  if (error.message.startsWith('TRYAGAIN')) return { kind: 'TRYAGAIN' };
  const match = /^(MOVED|ASK) \d+ (\S+)/.exec(error.message);
  return match ? { kind: match[1] as 'MOVED' | 'ASK', node: match[2]! } : undefined;
}

/** A script's reply and how many replicas acknowledged the writes before it (`WAIT`). */
export interface AcknowledgedReply {
  readonly reply: unknown;
  readonly acknowledged: number;
  /**
   * WAIT's own error (refused by an ACL or a managed service, say): the script ran and its writes stand,
   * but nobody knows how many replicas have them, so they count as acknowledged by none.
   */
  readonly waitError?: Error;
}

/**
 * The script's reply and WAIT's count from the pipeline's results. Throws the script's error (then the
 * script did not run); WAIT's comes back in the reply, since the script's writes were made all the same.
 */
export function acknowledgedReply(results: unknown): AcknowledgedReply {
  if (!results) throw new Error('the pipeline was discarded before it ran');
  const [[scriptError, reply], [waitError, acknowledged]] = results as [[Error | null, unknown], [Error | null, unknown]];
  if (scriptError) throw scriptError;
  if (waitError) return { reply, acknowledged: 0, waitError };
  return { reply, acknowledged: Number(acknowledged) };
}

/**
 * NOSCRIPT, also when a Cluster client wraps it ("Too many Cluster redirections. Last error: ReplyError:
 * NOSCRIPT ..."): a command that was redirected many times during a failover and finally reached a freshly
 * promoted replica, whose script cache is empty (Redis does not replicate it).
 */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && /(^|ReplyError: )NOSCRIPT/.test(error.message);
}
