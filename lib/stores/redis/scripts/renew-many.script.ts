import { RedisScript, type RedisClient } from './define-script.js';

/**
 * KEYS[i] lock hashes; ARGV[2i-1] token and ARGV[2i] lease ms for KEYS[i].
 *
 * One call renews a whole batch, which is what keeps the watchdog's traffic at one command per interval.
 * PEXPIRE only ever touches an existing key whose token matches, so a renewal can neither re-create a
 * released key nor extend somebody else's.
 */
const script = new RedisScript(`
local renewed = {}
for i, key in ipairs(KEYS) do
  if redis.pcall('HGET', key, 't') == ARGV[2 * i - 1] then
    redis.call('PEXPIRE', key, ARGV[2 * i])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
`);

export interface RenewEntry {
  readonly lockKey: string;
  readonly token: string;
  readonly leaseMs: number;
}

/** All entries must share one hash slot when the client is a Cluster. */
export async function renewManyScript(client: RedisClient, entries: readonly RenewEntry[]): Promise<boolean[]> {
  const keys = entries.map((entry) => entry.lockKey);
  const args = entries.flatMap((entry) => [entry.token, entry.leaseMs]);
  const results = (await script.run(client, keys, args)) as number[];
  return results.map((result) => result === 1);
}
