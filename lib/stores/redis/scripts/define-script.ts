import { createHash } from 'node:crypto';
import type { RedisClient } from '../connection/redis-client.js';

interface FlatArgs {
  evalsha(sha: string, numKeys: number, keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(lua: string, numKeys: number, keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** A script's reply and how many replicas acknowledged the writes before it (`WAIT`). */
export interface AcknowledgedReply {
  readonly reply: unknown;
  readonly acknowledged: number;
}

/**
 * NOSCRIPT, also when a Cluster client wraps it ("Too many Cluster redirections. Last error: ReplyError:
 * NOSCRIPT ..."): a command that was redirected many times during a failover and finally reached a freshly
 * promoted replica, whose script cache is empty (Redis does not replicate it).
 */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && /(^|ReplyError: )NOSCRIPT/.test(error.message);
}

/**
 * A Lua script sent by SHA. The first EVALSHA on a server that has never seen it fails with NOSCRIPT;
 * the EVAL fallback both answers that call and caches the script, so every later call is one EVALSHA.
 */
export class RedisScript {
  /** What EVALSHA names it by. */
  readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  run(client: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.send(client, keys.length, [...keys, ...args]);
  }

  /** The same with keys and arguments in one list (`numKeys` keys first). */
  send(client: RedisClient, numKeys: number, keysAndArgs: (string | number)[]): Promise<unknown> {
    return this.evalsha(client, numKeys, keysAndArgs).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      return this.eval(client, numKeys, keysAndArgs);
    });
  }

  /**
   * EVALSHA alone, for callers that handle NOSCRIPT themselves (`RedisCommands.runScript`, which falls
   * back to {@link eval} in the same step that reads the reply: one promise less on the hot path).
   */
  evalsha(client: RedisClient, numKeys: number, keysAndArgs: (string | number)[]): Promise<unknown> {
    // ioredis flattens array arguments into the command; its typings only know the spread form.
    return (client as unknown as FlatArgs).evalsha(this.sha, numKeys, keysAndArgs);
  }

  eval(client: RedisClient, numKeys: number, keysAndArgs: (string | number)[]): Promise<unknown> {
    return (client as unknown as FlatArgs).eval(this.lua, numKeys, keysAndArgs);
  }

  /**
   * Runs the script, then `WAIT replicas timeoutMs` on the same connection (one pipeline, so on a Cluster
   * both go to the node that owns `keys[0]`): how many replicas have the script's writes, as Redisson's
   * synced writes ask. WAIT cannot run inside a script, and on another connection it would wait for that
   * connection's writes, not these.
   */
  async runAcknowledged(
    client: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
    replicas: number,
    timeoutMs: number,
  ): Promise<AcknowledgedReply> {
    const send = async (useSha: boolean): Promise<AcknowledgedReply> => {
      const pipeline = client.pipeline();
      if (useSha) pipeline.evalsha(this.sha, keys.length, ...keys, ...args);
      else pipeline.eval(this.lua, keys.length, ...keys, ...args);
      pipeline.wait(replicas, timeoutMs);
      const results = await pipeline.exec();
      if (!results) throw new Error('the pipeline was discarded before it ran');
      const [[scriptError, reply], [waitError, acknowledged]] = results as [[Error | null, unknown], [Error | null, unknown]];
      if (scriptError) throw scriptError;
      if (waitError) throw waitError;
      return { reply, acknowledged: Number(acknowledged) };
    };
    try {
      return await send(true);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return send(false);
    }
  }
}

/**
 * The two builds of a script that announces on a channel: with PUBLISH, and with SPUBLISH for sharded
 * pub/sub (a script may only SPUBLISH on a channel of its own slot). `lua` gets the command's name.
 */
export function publishingScript(lua: (publish: 'PUBLISH' | 'SPUBLISH') => string): (sharded: boolean) => RedisScript {
  const plain = new RedisScript(lua('PUBLISH'));
  const sharded = new RedisScript(lua('SPUBLISH'));
  return (useSharded) => (useSharded ? sharded : plain);
}
