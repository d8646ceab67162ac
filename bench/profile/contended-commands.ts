import { Redis } from 'ioredis';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import { contend } from '../scenarios/contention.workload.js';
import { openRedisTarget } from '../support/redis-target.js';
import { contenderById } from './profile-contenders.js';

/**
 * Scenario 3's workload (16 workers over 4 instances on one key, hold 1 ms) for one contender, with the
 * server commands per critical section broken down by command (INFO commandstats deltas: a script's own
 * calls count under their names, the script under evalsha):
 *
 *     node -r ./test/support/register-ts.cjs bench/profile/contended-commands.ts lock-service 3000
 */
async function main(): Promise<void> {
  const [id = 'lock-service', msArg = '3000'] = process.argv.slice(2);
  const target = await openRedisTarget();
  const admin = new Redis(target.url);
  const adapters: LockAdapter[] = [];
  try {
    for (let instance = 0; instance < 4; instance++) {
      adapters.push(
        await contenderById(id).open({
          redisUrl: target.url,
          keyPrefix: 'contended:',
          leaseMs: 10_000,
          waitMs: 5_000,
          tuning: 'defaults',
          onLost: (key) => console.error(`lost ${key}`),
        }),
      );
    }
    await contend(adapters, 'warm', { workers: 16, holdMs: 1, durationMs: 300 });
    const before = await commandCounts(admin);
    const outcome = await contend(adapters, 'hot', { workers: 16, holdMs: 1, durationMs: Number(msArg) });
    const after = await commandCounts(admin);
    const rows = [...after].map(([name, calls]) => [name, (calls - (before.get(name) ?? 0)) / outcome.sections] as const).filter(([, perSection]) => perSection > 0.005);
    rows.sort((a, b) => b[1] - a[1]);
    const total = rows.reduce((sum, [, perSection]) => sum + perSection, 0);
    console.log(`${id}: ${outcome.sections} critical sections, ${total.toFixed(2)} server commands each, longest wait ${outcome.maxWaitMs.toFixed(0)} ms = ${(outcome.maxWaitMs / outcome.meanWaitMs).toFixed(1)}× the mean`);
    for (const [name, perSection] of rows) console.log(`  ${name.padEnd(12)} ${perSection.toFixed(2)}`);
  } finally {
    for (const adapter of adapters) await adapter.close();
    await admin.quit();
    await target.stop();
  }
}

/** Calls per command since the server started (INFO commandstats). */
async function commandCounts(admin: Redis): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const match of (await admin.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) counts.set(match[1]!, Number(match[2]));
  return counts;
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
