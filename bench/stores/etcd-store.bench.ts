import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { DistributedLockModule, LockService, type LockModuleOptions } from '../../lib/index.js';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server.js';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server.js';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import { openNestContext } from '../adapters/nest-context.js';
import { contend } from '../scenarios/contention.workload.js';
import { pairs } from '../scenarios/sequential.scenario.js';
import { pairedRatio, spread, type Spread } from '../support/stats.js';

/**
 * `node --expose-gc -r ./test/support/register-ts.cjs bench/stores/etcd-store.bench.ts [--quick]`
 *
 * The etcd store next to Redis, through the same `LockService` configuration, in one run, rounds
 * interleaved: uncontended acquire+release pairs per second (one worker, one key) and the contended
 * hand-off (16 workers over 4 application instances on one key, holding 1 ms). etcd runs as one member and
 * as a three-member cluster on this machine (every write is a Raft round and an fsync, on each member).
 * Ratios are per round against Redis; absolute numbers move with the machine's load.
 */
interface Target {
  readonly id: string;
  readonly options: (keyPrefix: string) => LockModuleOptions;
}

interface Measured {
  readonly pairsPerSecond: number[];
  readonly acquireP50Ms: number[];
  readonly releaseP50Ms: number[];
  readonly sectionsPerSecond: number[];
  readonly handoffP50Ms: number[];
  violations: number;
}

const QUICK = process.argv.includes('--quick');
const ROUNDS = QUICK ? 2 : 5;
const PAIRS_MS = QUICK ? 300 : 1_000;
const CONTENDED_MS = QUICK ? 500 : 2_000;

async function openAdapter(options: LockModuleOptions): Promise<LockAdapter> {
  const app = await openNestContext([DistributedLockModule.forRoot({ leaseMs: 10_000, waitMs: 10_000, ...options })]);
  const locks = app.get(LockService);
  return { acquire: (key) => locks.acquire(key), close: () => app.close() };
}

async function main(): Promise<void> {
  const run = randomBytes(3).toString('hex');
  const servers: { redis?: RedisServer; single?: EtcdCluster; cluster?: EtcdCluster } = {};
  try {
    [servers.redis, servers.single, servers.cluster] = await Promise.all([startRedisServer(), startEtcdCluster(), startEtcdCluster({ size: 3 })]);
    const targets: Target[] = [
      { id: 'redis', options: (keyPrefix) => ({ redis: servers.redis!.url, keyPrefix }) },
      { id: 'etcd (1 member)', options: (keyPrefix) => ({ store: 'etcd', etcd: servers.single!.endpoints, keyPrefix }) },
      { id: 'etcd (3 members)', options: (keyPrefix) => ({ store: 'etcd', etcd: servers.cluster!.endpoints, keyPrefix }) },
    ];
    const results = new Map<string, Measured>(
      targets.map((t) => [t.id, { pairsPerSecond: [], acquireP50Ms: [], releaseP50Ms: [], sectionsPerSecond: [], handoffP50Ms: [], violations: 0 }]),
    );
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets) {
        const measured = results.get(target.id)!;
        const keyPrefix = `bench:${run}:${round}:`;
        const single = await openAdapter(target.options(keyPrefix));
        try {
          await pairs(single, 'seq', 30, Infinity);
          const sequential = await pairs(single, 'seq', Infinity, PAIRS_MS);
          measured.pairsPerSecond.push(sequential.pairsPerSecond);
          measured.acquireP50Ms.push(sequential.acquireP50Ms);
          measured.releaseP50Ms.push(sequential.releaseP50Ms);
        } finally {
          await single.close();
        }
        const instances = await Promise.all(Array.from({ length: 4 }, () => openAdapter(target.options(keyPrefix))));
        try {
          const contended = await contend(instances, 'hot', { workers: 16, holdMs: 1, durationMs: CONTENDED_MS });
          measured.sectionsPerSecond.push(contended.sectionsPerSecond);
          measured.handoffP50Ms.push(contended.handoffP50Ms);
          measured.violations += contended.exclusionViolations;
        } finally {
          await Promise.all(instances.map((instance) => instance.close()));
        }
        console.log(
          `round ${round + 1}/${ROUNDS} ${target.id}: ${Math.round(measured.pairsPerSecond.at(-1)!)} pairs/s, ` +
            `${Math.round(measured.sectionsPerSecond.at(-1)!)} CS/s contended, hand-off p50 ${measured.handoffP50Ms.at(-1)!.toFixed(2)} ms`,
        );
      }
    }
    const redis = results.get('redis')!;
    const fmt = (s: Spread, digits = 0): string => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
    console.log(`\n| store | pairs/s | × redis | acquire p50 ms | release p50 ms | contended CS/s | × redis | hand-off p50 ms | violations |`);
    console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- |`);
    for (const [id, m] of results) {
      console.log(
        `| ${id} | ${fmt(spread(m.pairsPerSecond))} | ${fmt(pairedRatio(m.pairsPerSecond, redis.pairsPerSecond), 2)} | ` +
          `${fmt(spread(m.acquireP50Ms), 2)} | ${fmt(spread(m.releaseP50Ms), 2)} | ${fmt(spread(m.sectionsPerSecond))} | ` +
          `${fmt(pairedRatio(m.sectionsPerSecond, redis.sectionsPerSecond), 2)} | ${fmt(spread(m.handoffP50Ms), 2)} | ${m.violations} |`,
      );
    }
    console.log(`\n${ROUNDS} rounds, medians (min–max); ratios paired by round.`);
  } finally {
    await Promise.all([servers.redis?.stop(), servers.single?.stop(), servers.cluster?.stop()]);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
