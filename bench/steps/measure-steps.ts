import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { openBenchRedis } from '../adapters/bench-redis-client.js';
import { fencedContender } from '../adapters/fenced.adapter.js';
import { defineLockedTarget } from '../adapters/decorated-target.js';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import { openNestContext } from '../adapters/nest-context.js';
import { openRedisTarget } from '../support/redis-target.js';
import { now } from '../support/clock.js';
import { pairedRatio, spread } from '../support/stats.js';

/**
 * What each step of a series of commits bought, measured in one process against one Redis, rounds
 * interleaved (the bench's rule): `node --expose-gc -r ./test/support/register-ts.cjs bench/steps/measure-steps.ts
 * <commit> <commit> ...`. Each commit's `lib/` is extracted (git archive) into a temporary folder and loaded
 * next to the others, so every step runs the same scenarios in the same rounds as the floors (raw and
 * fenced): sequential pairs and 64 workers on distinct keys; LockService.acquire/release, the same with
 * `fair: true`, withLock and a `@DistributedLock` method (each called whole) and the Redis store alone. Prints the median of per-round ratios to
 * raw, to fenced and to the previous step.
 */
const ROUNDS = Number(process.env.STEP_ROUNDS ?? 10);
const SEQUENTIAL_MS = 400;
const CONCURRENT_MS = 400;
const WORKERS = 64;

interface Step {
  readonly name: string;
  readonly service: LockAdapter;
  /** The same with `fair: true`. */
  readonly fair: LockAdapter;
  /** `withLock(key, emptyBody)`, called whole (`run`). */
  readonly withLock: LockAdapter;
  /** A provider's method under `@DistributedLock({ key: '{key}' })`, called whole. */
  readonly decorator: LockAdapter;
  readonly store: LockAdapter;
  close(): Promise<void>;
}

async function main(): Promise<void> {
  const commits = process.argv.slice(2);
  if (commits.length === 0) throw new Error('usage: measure-steps.ts <commit> [<commit> ...]');
  const root = resolve(__dirname, '../..');
  const scratch = mkdtempSync(join(tmpdir(), 'lock-steps-'));
  const target = await openRedisTarget();
  const steps: Step[] = [];
  const raw = openRaw(target.url);
  const fenced = await fencedContender.open({
    redisUrl: target.url,
    keyPrefix: 'steps:fenced:',
    leaseMs: 10_000,
    waitMs: 5_000,
    tuning: 'tuned',
    onLost: () => undefined,
  });
  try {
    for (const commit of commits) {
      const dir = join(scratch, commit);
      mkdirSync(dir);
      execFileSync('sh', ['-c', `git -C '${root}' archive '${commit}' lib | tar -x -C '${dir}'`]);
      // The copy resolves its dependencies (Nest, ioredis) from this checkout, so every copy shares them.
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
      steps.push(await openStep(commit, dir, target.url));
    }
    const seq = new Map<string, number[]>();
    const conc = new Map<string, number[]>();
    // CPU per pair, Node's and the server's: on a box shared with other work, less moved by it than pairs/s.
    const cpu = new Map<string, number[]>();
    const admin = openBenchRedis(target.url);
    const timed = async (id: string, run: () => Promise<{ rate: number; pairs: number }>): Promise<number> => {
      const node = process.cpuUsage();
      const server = await serverCpuMicros(admin);
      const { rate, pairs } = await run();
      const used = process.cpuUsage(node);
      add(cpu, `${id} node`, (used.user + used.system) / pairs);
      add(cpu, `${id} redis`, ((await serverCpuMicros(admin)) - server) / pairs);
      return rate;
    };
    const add = (map: Map<string, number[]>, id: string, value: number) => map.set(id, [...(map.get(id) ?? []), value]);
    const entrants: Array<[string, LockAdapter]> = [['raw', raw], ['fenced', fenced], ...steps.flatMap((step): Array<[string, LockAdapter]> => [
      [`${step.name} store`, step.store],
      [`${step.name} LockService`, step.service],
      [`${step.name} fair`, step.fair],
      [`${step.name} withLock`, step.withLock],
      [`${step.name} decorator`, step.decorator],
    ])];
    for (const [, adapter] of entrants) {
      await sequential(adapter, 'warm', 200);
      await concurrent(adapter, 'warm', 200);
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Every other round in reverse: what one path leaves behind (garbage, timers) falls on the next one,
      // and a fixed order would bill it to the same path every round.
      const order = round % 2 === 0 ? entrants : [...entrants].reverse();
      for (const [id, adapter] of order) add(seq, id, await sequential(adapter, `s${round}`, SEQUENTIAL_MS));
      for (const [id, adapter] of order) add(conc, id, await timed(id, () => concurrent(adapter, `c${round}`, CONCURRENT_MS)));
      console.error(`round ${round + 1}/${ROUNDS}`);
    }
    for (const [title, map] of [
      ['sequential', seq],
      ['64 workers', conc],
    ] as const) {
      console.log(`\n${title}: pairs/s (median), × raw, × fenced, × the same path one step before (medians of per-round ratios)`);
      let previous: Record<string, string> = {};
      for (const [id] of entrants) {
        const values = map.get(id)!;
        const path = id.split(' ').slice(1).join(' ');
        const before = previous[path];
        const vsRaw = pairedRatio(values, map.get('raw')!).median;
        const vsFenced = pairedRatio(values, map.get('fenced')!).median;
        const vsBefore = before ? pairedRatio(values, map.get(before)!).median.toFixed(2) + '×' : '–';
        console.log(`${id.padEnd(28)} ${Math.round(spread(values).median).toString().padStart(7)}  ${vsRaw.toFixed(2)}×  ${vsFenced.toFixed(2)}×  ${vsBefore}`);
        if (path) previous = { ...previous, [path]: id };
      }
    }
    console.log('\n64 workers: CPU per pair in µs (medians over rounds), Node and Redis, and their sum × fenced');
    const fencedCpu = spread(cpu.get('fenced node')!).median + spread(cpu.get('fenced redis')!).median;
    for (const [id] of entrants) {
      const node = spread(cpu.get(`${id} node`)!).median;
      const redis = spread(cpu.get(`${id} redis`)!).median;
      console.log(`${id.padEnd(28)} ${node.toFixed(1).padStart(6)} ${redis.toFixed(1).padStart(6)}  ${((node + redis) / fencedCpu).toFixed(2)}×`);
    }
    await admin.quit();
  } finally {
    for (const step of steps) await step.close();
    await raw.close();
    await fenced.close();
    await target.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function openStep(name: string, dir: string, url: string): Promise<Step> {
  /* eslint-disable @typescript-eslint/no-require-imports -- each copy of lib is loaded from its own folder */
  const lib = require(join(dir, 'lib/index.ts'));
  const { createRedisConnection } = require(join(dir, 'lib/stores/redis/connection/redis-client.factory.ts'));
  const { RedisLockStore } = require(join(dir, 'lib/stores/redis/redis-lock.store.ts'));
  /* eslint-enable @typescript-eslint/no-require-imports */
  const keyPrefix = `steps:${name}:${randomUUID().slice(0, 6)}:`;
  // The step's own decorator, on a provider of the step's application (bound to its LockService at startup).
  const Target = defineLockedTarget([lib.DistributedLock({ key: 'dl:{key}' }) as MethodDecorator]);
  const app: INestApplicationContext = await openNestContext(
    [lib.DistributedLockModule.forRoot({ redis: url, keyPrefix, leaseMs: 10_000, waitMs: 5_000 })],
    [Target],
  );
  const locks = app.get(lib.LockService);
  const target = app.get(Target);
  const fairApp: INestApplicationContext = await openNestContext([
    lib.DistributedLockModule.forRoot({ redis: url, keyPrefix: `${keyPrefix}fair:`, leaseMs: 10_000, waitMs: 5_000, fair: true }),
  ]);
  const fairLocks = fairApp.get(lib.LockService);
  const store = new RedisLockStore(createRedisConnection(url), { keyPrefix: `${keyPrefix}store:`, commandTimeoutMs: 2_000 });
  return {
    name,
    service: { acquire: (key) => locks.acquire(key), close: async () => undefined },
    fair: { acquire: (key) => fairLocks.acquire(key), close: async () => undefined },
    withLock: {
      acquire: () => Promise.reject(new Error('withLock is measured whole (run)')),
      run: async (key) => void (await locks.withLock(`wl:${key}`, emptyBody)),
      close: async () => undefined,
    },
    decorator: {
      acquire: () => Promise.reject(new Error('the decorator is measured whole (run)')),
      run: (key) => target.locked(key, emptyBody),
      close: async () => undefined,
    },
    store: {
      async acquire(key) {
        const token = randomUUID();
        if (!(await store.acquire(key, token, 10_000, 'bench')).acquired) throw new Error(`${key} taken`);
        return { release: async () => void (await store.release(key, token, 0)) };
      },
      close: () => store.close(),
    },
    close: async () => {
      await app.close();
      await fairApp.close();
      await store.close();
    },
  };
}

function openRaw(url: string): LockAdapter {
  const client = openBenchRedis(url) as ReturnType<typeof openBenchRedis> & { stepRelease(key: string, token: string): Promise<number> };
  client.defineCommand('stepRelease', { numberOfKeys: 1, lua: "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0" });
  return {
    async acquire(key) {
      const token = randomUUID();
      if ((await client.set(`steps:raw:${key}`, token, 'PX', 10_000, 'NX')) !== 'OK') throw new Error(`${key} taken`);
      return { release: async () => void (await client.stepRelease(`steps:raw:${key}`, token)) };
    },
    close: async () => void (await client.quit()),
  };
}

const emptyBody = async (): Promise<void> => undefined;

/** One locked call in the adapter's own shape. */
async function pair(adapter: LockAdapter, key: string): Promise<void> {
  if (adapter.run) await adapter.run(key);
  else await (await adapter.acquire(key)).release();
}

async function sequential(adapter: LockAdapter, key: string, ms: number): Promise<number> {
  const started = now();
  let done = 0;
  while (now() - started < ms) {
    await pair(adapter, key);
    done++;
  }
  return (done * 1000) / (now() - started);
}

/** The server's CPU time so far (user + sys), in µs. */
async function serverCpuMicros(admin: ReturnType<typeof openBenchRedis>): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

async function concurrent(adapter: LockAdapter, round: string, ms: number): Promise<{ rate: number; pairs: number }> {
  const started = now();
  let done = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, worker) => {
      while (now() - started < ms) {
        await pair(adapter, `w${worker}:${round}`);
        done++;
      }
    }),
  );
  return { rate: (done * 1000) / (now() - started), pairs: done };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
