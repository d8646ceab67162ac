import type { RedisCluster } from '../../scripts/servers/redis-cluster';
import { askRedis } from '../../scripts/servers/server-probes';
import { choose, hold } from '../topology/topology';
import type { FaultResult, PlannedFault } from './fault-kinds';

/** How long the migration waits for a process to hold two of the slot's locks before it starts anyway. */
const SETTLE_BOUND_MS = 10_000;

/**
 * Moves `slot` to another master the way `redis-cli --cluster reshard` does (IMPORTING on the target,
 * MIGRATING on the source, MIGRATE per key, SETSLOT NODE on every master), but slowly, so that renew
 * batches run with the slot half moved: it first waits (a condition, bounded) until one process holds two
 * of the slot's locks, moves one of them, leaves the slot split for the plan's pause (longer than a
 * renewal interval), then moves the rest one key at a time.
 */
export async function migrateSlot(cluster: RedisCluster, slot: number, fault: PlannedFault): Promise<FaultResult> {
  const { master: source } = await cluster.shardOf(slot);
  const masters = (await cluster.topology()).filter((node) => node.role === 'master' && !node.failing && node.slots.length > 0);
  const target = choose(masters.filter((node) => node.id !== source.id), fault.pick);
  const keysIn = (count: number): Promise<string[]> =>
    askRedis(source.port, (redis) => redis.call('CLUSTER', 'GETKEYSINSLOT', String(slot), String(count)) as Promise<string[]>);
  const move = (keys: string[]): Promise<unknown> =>
    askRedis(source.port, (redis) => redis.call('MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'REPLACE', 'KEYS', ...keys));

  const deadline = Date.now() + SETTLE_BOUND_MS;
  let pair: string[] = [];
  while (pair.length < 2 && Date.now() < deadline) {
    pair = await heldByOneProcess(source.port, (await keysIn(100)).filter((key) => !key.includes('#')));
    if (pair.length < 2) await hold(50);
  }
  await askRedis(target.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', source.id));
  await askRedis(source.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', target.id));
  let moved = 0;
  const first = pair[0] ?? (await keysIn(1))[0];
  let renewedSplit = false;
  if (first) {
    await move([first]);
    moved++;
    // Split: one lock on the target, the other still on the source, until a renewal reached the moved
    // one (its TTL went up on the target: a renew batch ran while the slot was split), or long enough
    // for several renewal intervals.
    renewedSplit = await ttlRaised(target.port, first, Math.max(3_000, fault.durationMs));
  }
  for (;;) {
    const keys = await keysIn(1);
    if (keys.length === 0) break;
    await move(keys);
    moved++;
    await hold(100 + Math.round(fault.pick * 200));
  }
  for (const node of [target, source, ...masters.filter((other) => other.id !== target.id && other.id !== source.id)]) {
    await askRedis(node.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id));
  }
  const end = Date.now();
  await cluster.waitUntilHealthy();
  const split =
    pair.length >= 2 ? `; split while one holder had ${pair.join(' and ')}${renewedSplit ? ', renewed meanwhile' : ', no renewal seen'}` : '; no holder of two of its locks came';
  return { target: `slot:${slot}`, end, recovered: Date.now(), detail: `${moved} key(s) ${source.port} → ${target.port}${split}` };
}

/** Resolves true once `key`'s TTL on `port` went up (it was renewed there), false after `boundMs`. */
async function ttlRaised(port: number, key: string, boundMs: number): Promise<boolean> {
  // The target only imports the slot yet: it answers for the key after ASKING, on the same connection.
  const pttl = (): Promise<number> =>
    askRedis(port, async (redis) => {
      await redis.call('ASKING');
      return redis.pttl(key);
    });
  const deadline = Date.now() + boundMs;
  let last = await pttl();
  while (Date.now() < deadline) {
    await hold(50);
    const now = await pttl();
    if (now < 0) return false;
    if (now > last + 100) return true;
    last = now;
  }
  return false;
}

/**
 * Two lock keys held by one process and granted within 200 ms of each other (their values,
 * `<flag><token>|<fence>|<holder>`, carry holder and µs-clock fence), so that the watchdog renews them in
 * one batch; sorted, as a multi-key hold takes them and the batch lists them.
 */
async function heldByOneProcess(port: number, lockKeys: string[]): Promise<string[]> {
  if (lockKeys.length < 2) return [];
  const values = await askRedis(port, (redis) => redis.mget(...lockKeys));
  const held = values.flatMap((value, i) => {
    const [, fence, holder] = value?.split('|') ?? [];
    return holder && fence ? [{ key: lockKeys[i]!, holder, fence: Number(fence) }] : [];
  });
  for (const a of held) {
    const b = held.find((other) => other !== a && other.holder === a.holder && Math.abs(other.fence - a.fence) < 200_000);
    if (b) return [a.key, b.key].sort();
  }
  return [];
}
