import type { Redis } from 'ioredis';

/** Calls per command from INFO commandstats: commands run inside scripts are counted too. */
export async function commandCalls(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
  return calls;
}
