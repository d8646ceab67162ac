import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/**
 * A Lua script sent by SHA. The first EVALSHA on a server that has never seen it fails with NOSCRIPT;
 * the EVAL fallback both answers that call and caches the script, so every later call is one EVALSHA.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(client: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}
