import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { CONTENDERS, entrantsFor, type Entrant } from './adapters/contenders.js';
import { benchConfig, type BenchConfig } from './bench.config.js';
import type { BenchResults } from './report/bench-results.js';
import { renderMarkdown } from './report/markdown.js';
import { writeResultFiles } from './report/result-files.js';
import { checkTargets } from './report/targets.js';
import type { BenchContext } from './scenarios/bench-context.js';
import { runConcurrentScenario } from './scenarios/concurrent.scenario.js';
import { runContendedScenario } from './scenarios/contended.scenario.js';
import { runCostScenario } from './scenarios/cost.scenario.js';
import { decoratorOverhead } from './scenarios/decorator-overhead.scenario.js';
import { runSequentialScenario } from './scenarios/sequential.scenario.js';
import { runReplicaAckScenario } from './scenarios/replica-ack.scenario.js';
import { runShapesScenario } from './scenarios/shapes.scenario.js';
import { runStoresScenario } from './scenarios/stores.scenario.js';
import { runClusterWatchdog, runWatchdogScenario, type ClusterWatchdogRow } from './scenarios/watchdog.scenario.js';
import { runClusterContendedScenario } from './scenarios/cluster-contended.scenario.js';
import type { ContendedRow } from './scenarios/contended.scenario.js';
import { startRedisCluster } from '../scripts/servers/redis-cluster.js';
import { describeEnvironment } from './support/environment.js';
import { openRedisTarget } from './support/redis-target.js';
import { BENCH_STORES } from './stores/bench-stores.js';

/**
 * `npm run bench [-- --quick] [--only=raw,lock-service] [--scenarios=1,3] [--stores=redis,postgres]`: the
 * scenarios of issue 6 against one Redis, in one process, contenders interleaved, then this library on each
 * store (scenario 7) and its lock shapes against what they replace (scenario 9); prints a Markdown report and
 * writes it with the JSON results. Scenario 6 is derived from 1 and 2.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const config = withRounds(benchConfig(args.includes('--quick')), listOption(args, 'rounds')?.[0]);
  const only = listOption(args, 'only');
  const scenarios = new Set(listOption(args, 'scenarios') ?? ['1', '2', '3', '4', '5', '7', '8', '9']);
  const storeIds = listOption(args, 'stores');
  const when = async <T>(scenario: string, title: string, run: () => Promise<T[]>): Promise<T[]> => {
    if (!scenarios.has(scenario)) return [];
    console.log(`scenario ${scenario}: ${title}`);
    return run();
  };
  const startedAt = Date.now();
  // A contender's stray timer rejection must be visible, not fatal to the whole comparison.
  let strayRejections = 0;
  process.on('unhandledRejection', (reason) => {
    strayRejections++;
    if (strayRejections <= 5) console.error('unhandled rejection (counted, run continues):', reason);
  });

  const target = await openRedisTarget();
  const admin = new Redis(target.url);
  try {
    const selected = CONTENDERS.filter((contender) => !only || only.includes(contender.id));
    const unavailable = selected.flatMap((c) => (c.unavailable?.() ? [{ id: c.id, reason: c.unavailable()! }] : []));
    const available = selected.filter((c) => !c.unavailable?.());
    const environment = await describeEnvironment(admin, target, available.map((c) => c.packageName));
    const context: BenchContext = {
      config,
      redisUrl: target.url,
      admin,
      runId: randomBytes(3).toString('hex'),
      log: (line) => console.log(line),
    };
    console.log(
      `bench (${config.mode}) · ${environment.machine.cpuModel} × ${environment.machine.cores}, load ${environment.machine.loadAverage1m} · ` +
        `Node ${environment.node} · Redis ${environment.redis.version} at ${environment.redis.url}${target.private ? ' (private)' : ''}`,
    );
    for (const u of unavailable) console.log(`skipping ${u.id}: ${u.reason}`);

    const perContender = entrantsFor(available, false);
    const everyTuning = entrantsFor(available, true);
    // --only picks the watchdog contenders too; otherwise the config's list keeps the run short.
    const watchdogEntrants = perContender.filter(
      (e: Entrant) => e.contender.renewsLeases && (only !== undefined || config.watchdog.contenders.includes(e.contender.id)),
    );

    const sequential = await when('1', 'uncontended, sequential', () => runSequentialScenario(context, perContender));
    const concurrent = await when('2', 'uncontended, concurrent', () => runConcurrentScenario(context, perContender));
    const contended = await when('3', 'contended', () => runContendedScenario(context, everyTuning));
    const cost = await when('4', 'cost', () => runCostScenario(context, perContender, everyTuning));
    const watchdog = await when('5', 'watchdog at scale', () => runWatchdogScenario(context, watchdogEntrants));
    const stores = await when('7', 'stores', () =>
      runStoresScenario(context, BENCH_STORES.filter((store) => (!storeIds || storeIds.includes(store.id)) && !store.unavailable?.())),
    );
    const libraryMeasured = available.some((contender) => contender.id === 'lock-service');
    // One private Cluster (3 masters, 3 replicas) for both Cluster scenarios, started only if one runs.
    const clusterScenarios = libraryMeasured ? ['3', '5'].filter((scenario) => scenarios.has(scenario)) : [];
    const cluster = clusterScenarios.length > 0 ? await startRedisCluster() : undefined;
    let clusterContended: ContendedRow[] = [];
    let clusterWatchdog: ClusterWatchdogRow | undefined;
    try {
      if (cluster) {
        clusterContended = await when('3', 'contended on a Redis Cluster (this library)', () => runClusterContendedScenario(context, cluster));
        [clusterWatchdog] = await when('5', 'watchdog at scale on a Redis Cluster (this library)', async () => [await runClusterWatchdog(context, cluster)]);
      }
    } finally {
      await cluster?.stop();
    }
    const [replicaAck] = libraryMeasured
      ? await when('8', 'replica acknowledgement (replicas: 1) cost (this library)', async () => [await runReplicaAckScenario(context)])
      : [];
    const shapes = libraryMeasured
      ? await when('9', 'lock shapes (this library; redis-semaphore Semaphore)', () =>
          runShapesScenario(context, { withRedisSemaphore: available.some((contender) => contender.id === 'redis-semaphore') }),
        )
      : [];

    const measured = {
      environment,
      config,
      entrants: everyTuning.map((e) => ({
        id: e.id,
        label: e.contender.label,
        role: e.contender.role,
        tuning: e.tuning,
        waiting: e.waiting,
        packageName: e.contender.packageName,
      })),
      unavailable,
      sequential,
      concurrent,
      contended,
      clusterContended,
      cost,
      watchdog,
      stores,
      shapes,
      ...(clusterWatchdog ? { clusterWatchdog } : {}),
      ...(replicaAck ? { replicaAck } : {}),
      decoratorOverhead: decoratorOverhead(sequential, concurrent),
      durationSeconds: (Date.now() - startedAt) / 1000,
    };
    const results: BenchResults = { ...measured, targets: checkTargets(measured) };
    const markdown = renderMarkdown(results);
    const files = writeResultFiles(results, markdown);
    console.log(`\n${markdown}`);
    if (strayRejections > 0) console.log(`Unhandled rejections during the run: ${strayRejections}`);
    console.log(`Results: ${files.json}\n         ${files.markdown}`);
  } finally {
    admin.disconnect();
    await target.stop();
  }
}

/**
 * `--rounds=N`: scenarios 1, 2 and 9 in N interleaved rounds instead of the mode's count. On a box shared
 * with other work, more rounds make the median of per-round ratios steadier; nothing else changes.
 */
function withRounds(config: BenchConfig, rounds: string | undefined): BenchConfig {
  if (rounds === undefined) return config;
  const repetitions = Number(rounds);
  if (!Number.isInteger(repetitions) || repetitions < 1) throw new Error(`--rounds must be a positive integer, got ${rounds}`);
  return {
    ...config,
    sequential: { ...config.sequential, repetitions },
    concurrent: { ...config.concurrent, repetitions },
    shapes: { ...config.shapes, repetitions },
  };
}

/** `--name=a,b` as ['a', 'b']. */
function listOption(args: readonly string[], name: string): string[] | undefined {
  return args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3).split(',');
}

main().then(
  // Some contenders keep sockets or timers referenced after close; the report is written, so leave.
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
