import type { RedisClient } from '../connection/redis-client.js';
import { RedisScript } from './define-script.js';
import { heldByLua } from './lock-value.js';

/**
 * True when `value` (a lock key's value, see lock-value.ts; false for a missing key, an error table for a
 * value of another type) carries `token`.
 */
const OWNED_BY = `
local function owned(value, token)
  return type(value) == 'string' and ${heldByLua('value', 'token')}
end`;

/**
 * KEYS[i] lock keys; ARGV[2i-1] token and ARGV[2i] lease ms for KEYS[i].
 *
 * One call renews a whole batch, which is what keeps the watchdog's traffic at one command per interval.
 * PEXPIRE only ever touches an existing key whose token matches, so a renewal can neither re-create a
 * released key nor extend somebody else's. A value this library did not write (WRONGTYPE included) is not
 * ours.
 */
const script = new RedisScript(`${OWNED_BY}
local renewed = {}
for i, key in ipairs(KEYS) do
  if owned(redis.pcall('GET', key), ARGV[2 * i - 1]) then
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

/** One renewal's answer: renewed, not (or no longer) ours, or not served by the node that was asked. */
export type RenewReply = 'renewed' | 'not-ours' | 'elsewhere';

const REPLIES: Record<number, RenewReply> = { 0: 'not-ours', 1: 'renewed', 2: 'elsewhere' };

export interface RenewCall {
  readonly client: RedisClient;
  readonly entries: readonly RenewEntry[];
  /** With `replicas > 0`, `WAIT replicas timeoutMs` follows on the same connection. */
  readonly replicas: number;
  readonly waitTimeoutMs: number;
}

export interface RenewCallReply {
  readonly replies: RenewReply[];
  /** Replicas that acknowledged the renewals (only asked when `replicas > 0`). */
  readonly acknowledged: number;
}

/** `keysAndArgs` holds the `numKeys` keys first; a batch of 1000 leases is one array, built in one pass. */
async function runRenew(script: RedisScript, call: RenewCall, numKeys: number, keysAndArgs: (string | number)[]): Promise<RenewCallReply> {
  if (call.replicas === 0) {
    const replies = (await script.send(call.client, numKeys, keysAndArgs)) as number[];
    return { replies: replies.map((reply) => REPLIES[reply]!), acknowledged: 0 };
  }
  const keys = keysAndArgs.slice(0, numKeys) as string[];
  const { reply, acknowledged } = await script.runAcknowledged(call.client, keys, keysAndArgs.slice(numKeys), call.replicas, call.waitTimeoutMs);
  return { replies: (reply as number[]).map((value) => REPLIES[value]!), acknowledged };
}

/** Declares every key, so on a Cluster all entries must share one hash slot. */
export function renewManyScript(call: RenewCall): Promise<RenewCallReply> {
  const { entries } = call;
  const n = entries.length;
  const keysAndArgs = new Array<string | number>(3 * n);
  for (let i = 0; i < n; i++) {
    const entry = entries[i]!;
    keysAndArgs[i] = entry.lockKey;
    keysAndArgs[n + 2 * i] = entry.token;
    keysAndArgs[n + 2 * i + 1] = entry.leaseMs;
  }
  return runRenew(script, call, n, keysAndArgs);
}

/**
 * KEYS[1] one of the lock keys (it routes the call to its node); ARGV[3i-2] lock key, ARGV[3i-1] token,
 * ARGV[3i] lease ms, for every entry.
 *
 * The Cluster form: one call per node, not per hash slot. Redis 7's `allow-cross-slot-keys` lets a script
 * touch keys of several slots as long as the node serves them all; the keys beyond the routing one are
 * passed as arguments, since declared keys must share one slot. A key the node does not serve (its slot
 * moved since the client last looked) answers 2, "elsewhere": unknown, retried after a slot refresh. A
 * foreign value at a lock key (WRONGTYPE) is simply not ours, as in the single-node script.
 */
const nodeScript = new RedisScript(`#!lua flags=allow-cross-slot-keys${OWNED_BY}
local renewed = {}
for i = 1, #ARGV, 3 do
  local value = redis.pcall('GET', ARGV[i])
  if type(value) == 'table' and value.err and not string.find(value.err, '^WRONGTYPE') then
    renewed[#renewed + 1] = 2
  elseif owned(value, ARGV[i + 1]) then
    redis.call('PEXPIRE', ARGV[i], ARGV[i + 2])
    renewed[#renewed + 1] = 1
  else
    renewed[#renewed + 1] = 0
  end
end
return renewed
`);

/** All entries should live on one Cluster node (the one serving the first entry's slot). */
export function renewOnNodeScript(call: RenewCall): Promise<RenewCallReply> {
  const { entries } = call;
  const keysAndArgs = new Array<string | number>(1 + 3 * entries.length);
  keysAndArgs[0] = entries[0]!.lockKey;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    keysAndArgs[1 + 3 * i] = entry.lockKey;
    keysAndArgs[2 + 3 * i] = entry.token;
    keysAndArgs[3 + 3 * i] = entry.leaseMs;
  }
  return runRenew(nodeScript, call, 1, keysAndArgs);
}
