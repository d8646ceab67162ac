import { DistributedLockModule, LockService } from '../../lib/index.js';
import { startRedisServer } from '../../scripts/servers/redis-server.js';
import { askRedis, waitFor } from '../../scripts/servers/server-probes.js';
import { openNestContext } from '../adapters/nest-context.js';
import { now } from '../support/clock.js';
import { spreadOf, type Spread } from '../support/stats.js';
import type { BenchContext } from './bench-context.js';

/** Scenario 8: what `replicas: 1` (WAIT after every grant and renewal) costs, against `replicas: 0`. */
export interface ReplicaAckRow {
  /** Sequential acquire + release pairs per second, one worker, one key. */
  readonly sequential: { readonly replicas0: Spread; readonly replicas1: Spread; readonly ratio: Spread };
  /** Pairs per second of 64 workers on distinct keys through one application. */
  readonly concurrent: { readonly replicas0: Spread; readonly replicas1: Spread; readonly ratio: Spread };
  readonly error?: string;
}

/**
 * A private primary with one replica on loopback; this library with `replicas: 0` and `replicas: 1`,
 * interleaved round by round. The replica round trip is all that differs, so the ratio is the option's
 * price on the fastest possible network; across machines it grows with the replica's latency.
 */
export async function runReplicaAckScenario(context: BenchContext): Promise<ReplicaAckRow> {
  const { repetitions, durationMs } = context.config.replicaAck;
  const primary = await startRedisServer({ args: () => ['--repl-diskless-sync-delay', '0'] });
  const replica = await startRedisServer({ args: () => ['--replicaof', '127.0.0.1', String(primary.port)] });
  const sequential: Record<0 | 1, number[]> = { 0: [], 1: [] };
  const concurrent: Record<0 | 1, number[]> = { 0: [], 1: [] };
  const apps: Array<{ close(): Promise<void> }> = [];
  try {
    await waitFor('the replica to sync', async () => /master_link_status:up/.test(await askRedis(replica.port, (r) => r.info('replication'))));
    const locks = {} as Record<0 | 1, LockService>;
    for (const replicas of [0, 1] as const) {
      const app = await openNestContext([
        DistributedLockModule.forRoot({ redis: primary.url, keyPrefix: `bench:${context.runId}:s7:${replicas}:`, replicas }),
      ]);
      apps.push(app);
      locks[replicas] = app.get(LockService);
    }
    for (let round = 0; round < repetitions; round++) {
      for (const replicas of [0, 1] as const) {
        const service = locks[replicas];
        sequential[replicas].push(await pairsPerSecond(durationMs, 1, (worker) => `seq:${worker}`, service));
        concurrent[replicas].push(await pairsPerSecond(durationMs, 64, (worker) => `par:${worker}`, service));
      }
      context.log(
        `  s7 replicas 0 vs 1: sequential ${Math.round(sequential[0].at(-1)!)} vs ${Math.round(sequential[1].at(-1)!)} pairs/s, ` +
          `64 workers ${Math.round(concurrent[0].at(-1)!)} vs ${Math.round(concurrent[1].at(-1)!)} pairs/s`,
      );
    }
    const rowOf = (runs: Record<0 | 1, number[]>) => ({
      replicas0: spreadOf(runs[0], (value) => value),
      replicas1: spreadOf(runs[1], (value) => value),
      ratio: spreadOf(runs[1].map((value, i) => value / runs[0][i]!), (value) => value),
    });
    return { sequential: rowOf(sequential), concurrent: rowOf(concurrent) };
  } catch (error) {
    const empty = spreadOf<number>([], (value) => value);
    const none = { replicas0: empty, replicas1: empty, ratio: empty };
    return { sequential: none, concurrent: none, error: error instanceof Error ? error.message : String(error) };
  } finally {
    for (const app of apps) await app.close();
    await Promise.all([primary.stop(), replica.stop()]);
  }
}

/** `workers` loops of acquire + release on their own key for `durationMs`; pairs per second. */
async function pairsPerSecond(durationMs: number, workers: number, key: (worker: number) => string, locks: LockService): Promise<number> {
  const stopAt = now() + durationMs;
  const startedAt = now();
  let done = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (now() < stopAt) {
        const lease = await locks.acquire(key(worker), { waitMs: 0 });
        await lease.release();
        done++;
      }
    }),
  );
  return (done * 1000) / (now() - startedAt);
}
