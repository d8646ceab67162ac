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
): Promise<unknown> {
  if (!acknowledgement) {
    const flat = client as unknown as FlatArgs;
    return bySha ? flat.evalsha(build.sha, numKeys, keysAndArgs) : flat.eval(build.lua, numKeys, keysAndArgs);
  }
  const pipeline = client.pipeline();
  const flat = pipeline as unknown as FlatArgs;
  if (bySha) flat.evalsha(build.sha, numKeys, keysAndArgs);
  else flat.eval(build.lua, numKeys, keysAndArgs);
  pipeline.wait(acknowledgement.replicas, acknowledgement.timeoutMs);
  return pipeline.exec();
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
