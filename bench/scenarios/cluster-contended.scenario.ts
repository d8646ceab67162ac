import type { INestApplicationContext } from '@nestjs/common';
import { DistributedLockModule, LockEvents, LockService, type LockModuleOptions } from '../../lib/index.js';
import type { RedisCluster } from '../../scripts/servers/redis-cluster.js';
import { askRedis } from '../../scripts/servers/server-probes.js';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import { openNestContext } from '../adapters/nest-context.js';
import type { CommandCounts } from '../support/command-stats.js';
import { commandDelta, totalCalls } from '../support/command-stats.js';
import type { BenchContext } from './bench-context.js';
import { contendedRow, describeContendedRun, type ContendedRow, type ContendedRun } from './contended.scenario.js';
import { contend } from './contention.workload.js';

/**
 * This library's configurations measured on the Cluster, each as its own entrant id. Queued waiters (the
 * default, and `fair`) with and without sharded pub/sub, which docs/performance.md recommends on a Cluster:
 * a PUBLISH travels to every node over the cluster bus, an SPUBLISH only to the shard that serves the key;
 * and the race (`queue: false`).
 */
export const CLUSTER_ENTRANTS: ReadonlyArray<{ id: string; label: string; options: Partial<LockModuleOptions> }> = [
  { id: 'lock-service-fair', label: 'LockService, fair: true, shardedPubSub: true', options: { fair: true, shardedPubSub: true } },
  { id: 'lock-service-sharded', label: 'LockService, shardedPubSub: true (waiters queue)', options: { shardedPubSub: true } },
  { id: 'lock-service', label: 'LockService, default options (waiters queue)', options: {} },
  { id: 'lock-service-race', label: 'LockService, queue: false (waiters race)', options: { queue: false } },
];

/** Untimed contention before the rounds: Cluster clients discover the slots, scripts get loaded. */
const WARM_UP_MS = 300;

/**
 * Scenario 3 on a Redis Cluster (goal 4 of issue 11: the key layout stays Cluster-safe): the same workload,
 * this library only (the other contenders connect to a single node), each configuration's 4 instances a
 * Cluster client of their own, rounds interleaved. Server commands are summed over every master.
 */
export async function runClusterContendedScenario(context: BenchContext, cluster: RedisCluster): Promise<ContendedRow[]> {
  const { repetitions, instances, ...plan } = context.config.contended;
  const seeds = cluster.seeds.map(({ host, port }) => ({ host, port }));
  const masters = (await cluster.topology()).filter((node) => node.role === 'master' && !node.failing).map((node) => node.port);
  const opened = await Promise.all(
    CLUSTER_ENTRANTS.map(async ({ id, options }) => {
      let lost = 0;
      const apps = await Promise.all(
        Array.from({ length: instances }, () =>
          openNestContext([
            DistributedLockModule.forRoot({
              redis: { cluster: seeds },
              keyPrefix: `bench:${context.runId}:s3c:${id}:`,
              leaseMs: context.config.leaseMs,
              waitMs: context.config.waitMs,
              ...options,
            }),
          ]),
        ),
      );
      for (const app of apps) app.get(LockEvents).on('lost', () => lost++);
      const adapters = apps.map(adapterOf);
      await contend(adapters, 'warm-up', { ...plan, durationMs: WARM_UP_MS });
      return { id, apps, adapters, lost: () => lost, runs: [] as ContendedRun[], error: undefined as string | undefined };
    }),
  );
  try {
    for (let repetition = 0; repetition < repetitions; repetition++) {
      for (const entrant of opened) {
        if (entrant.error) continue;
        try {
          const before = await clusterCommandStats(masters);
          const result = await contend(entrant.adapters, `hot:${repetition}`, plan);
          const commands = commandDelta(before, await clusterCommandStats(masters));
          const run: ContendedRun = { ...result, commandsPerSection: totalCalls(commands) / Math.max(1, result.sections), commands: Object.fromEntries(commands) };
          entrant.runs.push(run);
          context.log(`  s3c ${entrant.id}: ${describeContendedRun(run)}`);
        } catch (error) {
          entrant.error = error instanceof Error ? error.message : String(error);
        }
      }
    }
    return opened.map((entrant) => contendedRow(entrant.id, entrant.runs, entrant.lost(), entrant.error));
  } finally {
    await Promise.all(opened.flatMap((entrant) => entrant.apps.map((app) => app.close())));
  }
}

function adapterOf(app: INestApplicationContext): LockAdapter {
  const locks = app.get(LockService);
  return { acquire: (key) => locks.acquire(key), close: () => app.close() };
}

/** INFO commandstats summed over the Cluster's masters. */
async function clusterCommandStats(masters: readonly number[]): Promise<CommandCounts> {
  const counts = new Map<string, number>();
  for (const port of masters) {
    const text = await askRedis(port, (redis) => redis.info('commandstats'));
    for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + Number(match[2]));
  }
  return counts;
}
