import { contenderById } from './profile-contenders.js';
import { openRedisTarget } from '../support/redis-target.js';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import { Redis } from 'ioredis';

/** The server's CPU (user + sys) and the time its commands took (commandstats), in µs. */
async function serverCpu(admin: Redis): Promise<{ cpuMicros: number; commandMicros: number }> {
  const cpu = await admin.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(cpu)?.[1] ?? NaN);
  const stats = await admin.info('commandstats');
  let commandMicros = 0;
  for (const match of stats.matchAll(/usec=(\d+)/g)) commandMicros += Number(match[1]);
  return { cpuMicros: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6, commandMicros };
}

/**
 * One contender's uncontended loop on its own, for a CPU profile or an allocation count:
 *
 *     PROFILE_TO=.tmp/lock-service.cpuprofile node -r ./test/support/register-ts.cjs bench/profile/profile-path.ts lock-service 64 5000
 *
 * Arguments: contender id, workers (1 = scenario 1's loop, 64 = scenario 2's), milliseconds, and `count` to
 * count the promises created per pair (an async_hooks init hook: it slows the loop, so its pairs/s mean
 * nothing). With PROFILE_TO set, the timed loop alone (not transpiling, loading, warming up) is profiled
 * (sampling every 100 µs) into that file; bench/profile/summarize-profile.mjs reads it. With WITH_ALS set, an
 * AsyncLocalStorage is put to use first, as in the bench's process once a scoped contender has run.
 */
async function main(): Promise<void> {
  const [id = 'lock-service', workersArg = '64', msArg = '3000', countPromises] = process.argv.slice(2);
  const workers = Number(workersArg);
  const durationMs = Number(msArg);
  if (process.env.WITH_ALS) {
    // What the bench's process has once any contender ran a scope: an AsyncLocalStorage in use, which on
    // Node 20 turns on promise hooks for every promise of the process (Node 24: AsyncContextFrame, none).
    const { AsyncLocalStorage } = await import('node:async_hooks');
    new AsyncLocalStorage().run(1, () => undefined);
  }
  const target = await openRedisTarget();
  const admin = new Redis(target.url);
  const adapter: LockAdapter = await contenderById(id).open({
    redisUrl: target.url,
    keyPrefix: `prof:${id}:`,
    leaseMs: 10_000,
    waitMs: 5_000,
    tuning: 'defaults',
    onLost: (key) => console.error(`lost ${key}`),
  });
  try {
    await loop(adapter, workers, 300);
    let promises = 0;
    let hook: { disable(): void } | undefined;
    if (countPromises) {
      const { createHook } = await import('node:async_hooks');
      hook = createHook({ init: (_id, type) => void (type === 'PROMISE' && promises++) }).enable();
    }
    const profiler = process.env.PROFILE_TO ? await startProfiler() : undefined;
    const serverBefore = await serverCpu(admin);
    const nodeBefore = process.cpuUsage();
    const pairs = await loop(adapter, workers, durationMs);
    const nodeCpu = process.cpuUsage(nodeBefore);
    const serverAfter = await serverCpu(admin);
    hook?.disable();
    if (profiler) await profiler.stop(process.env.PROFILE_TO!);
    const perPair = (us: number) => (us / pairs).toFixed(1);
    console.log(
      `${id} × ${workers}: ${Math.round((pairs * 1000) / durationMs)} pairs/s; per pair: Node CPU ${perPair(nodeCpu.user + nodeCpu.system)} µs, ` +
        `Redis CPU ${perPair(serverAfter.cpuMicros - serverBefore.cpuMicros)} µs, Redis command time ${perPair(serverAfter.commandMicros - serverBefore.commandMicros)} µs` +
        `${countPromises ? `, ${(promises / pairs).toFixed(1)} promises` : ''}`,
    );
  } finally {
    await adapter.close();
    await admin.quit();
    await target.stop();
  }
}

/** The CPU profile of the timed loop only (not of transpiling and loading): node:inspector's profiler. */
async function startProfiler(): Promise<{ stop(file: string): Promise<void> }> {
  const { Session } = await import('node:inspector');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

async function loop(adapter: LockAdapter, workers: number, durationMs: number): Promise<number> {
  const stopAt = performance.now() + durationMs;
  let done = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const key = `w${worker}`;
      while (performance.now() < stopAt) {
        if (adapter.run) await adapter.run(key);
        else await (await adapter.acquire(key)).release();
        done++;
      }
    }),
  );
  return done;
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
