import type { RedisCluster } from '../../scripts/servers/redis-cluster';
import { askRedis } from '../../scripts/servers/server-probes';
import { choose, hold } from '../topology/topology';
import type { FaultResult, PlannedFault } from './fault-kinds';

/**
 * Moves `slot` to another master the way `redis-cli --cluster reshard` does, but one key at a time with
 * a pause after each (the plan's duration shared out), so that the watchdog's renew batches run while
 * some of the slot's keys are on the importing node and the rest still on the source: IMPORTING on the
 * target, MIGRATING on the source, MIGRATE per key, then SETSLOT NODE on every master.
 */
export async function migrateSlot(cluster: RedisCluster, slot: number, fault: PlannedFault): Promise<FaultResult> {
  const { master: source } = await cluster.shardOf(slot);
  const masters = (await cluster.topology()).filter((node) => node.role === 'master' && !node.failing && node.slots.length > 0);
  const target = choose(masters.filter((node) => node.id !== source.id), fault.pick);
  await askRedis(target.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', source.id));
  await askRedis(source.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', target.id));
  const until = Date.now() + fault.durationMs;
  let moved = 0;
  for (;;) {
    const keys = (await askRedis(source.port, (redis) => redis.call('CLUSTER', 'GETKEYSINSLOT', String(slot), '1'))) as string[];
    if (keys.length === 0) break;
    await askRedis(source.port, (redis) => redis.call('MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'REPLACE', 'KEYS', ...keys));
    moved += keys.length;
    if (Date.now() >= until) continue;
    // Long enough for a renewal interval of the case's leases to pass with the slot half moved.
    await hold(Math.min(until - Date.now(), 600 + Math.round(fault.pick * 600)));
  }
  for (const node of [target, source, ...masters.filter((other) => other.id !== target.id && other.id !== source.id)]) {
    await askRedis(node.port, (redis) => redis.call('CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id));
  }
  const end = Date.now();
  await cluster.waitUntilHealthy();
  return { target: `slot:${slot}`, end, recovered: Date.now(), detail: `${moved} key(s) ${source.port} → ${target.port}` };
}
