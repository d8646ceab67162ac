import { Redis } from 'ioredis';
import { newToken } from '../../lib/acquisition/ownership-token.js';
import { clockMicros } from '../../lib/stores/redis/client-clock.js';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout.js';
import { ACQUIRE_SCRIPT } from '../../lib/stores/redis/scripts/acquire.script.js';
import { nextFenceLua } from '../../lib/stores/redis/scripts/fence.lua.js';
import { heldByLua } from '../../lib/stores/redis/scripts/lock-value.js';
import { RELEASE_SCRIPT } from '../../lib/stores/redis/scripts/release.script.js';
import { openBenchRedis } from '../adapters/bench-redis-client.js';
import { openRedisTarget } from '../support/redis-target.js';

/**
 * What each part of the library's uncontended pair costs Redis, from the fenced floor up to the library's
 * own two scripts, one part added at a time: the same client, the same loop (64 workers on distinct keys,
 * acquire then release, nothing else in the process), rounds interleaved with the order reversed every
 * other round. Prints the server's CPU (INFO cpu) and its script time (INFO commandstats, EVALSHA usec)
 * per pair, the Node CPU of this process per pair, medians over rounds, and each step's difference to the one before:
 *
 *     node --expose-gc -r ./test/support/register-ts.cjs bench/profile/script-costs.ts [rounds=12] [ms=1500]
 *
 * The steps, each the one before plus:
 * 1. the fenced floor (bench/adapters/fenced.adapter.ts): SET NX PX of the token, INCR of a counter; GET
 *    and compare, DEL;
 * 2. the fencing token as the hybrid clock (fence.lua.ts): GETSET of the slot's counter with the caller's
 *    clock before the SET (one more argument), in place of the INCR after it;
 * 3. the lock value `-<token>|<fence>|<holder>` (lock-value.ts) in place of the bare token: the holder
 *    argument, the concatenation, and a release that checks the token inside the value;
 * 4. the library's scripts as they are (acquire.script.ts, release.script.ts): a re-sent grant answered
 *    with its token, a denial marking the value, the release's flags, keep ms and announcing argument.
 */
const WORKERS = 64;
const LEASE_MS = 10_000;
const HOLDER = 'bench-host:12345';

interface Step {
  readonly name: string;
  readonly acquireLua: string;
  readonly releaseLua: string;
  acquireArgs(lockKey: string, fenceKey: string, token: string): (string | number)[];
  releaseArgs(lockKey: string, token: string): (string | number)[];
}

const layout = new RedisKeyLayout('costs:');
const releaseTail = `${layout.slotTag('costs:x')}:${layout.prefixLength}:`;

const STEPS: readonly Step[] = [
  {
    name: '1. fenced floor',
    acquireLua: `if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return redis.call('INCR', KEYS[2]) end return 0`,
    releaseLua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
    acquireArgs: (lockKey, fenceKey, token) => [lockKey, fenceKey, token, LEASE_MS],
    releaseArgs: (lockKey, token) => [lockKey, token],
  },
  {
    name: '2. + hybrid clock token',
    acquireLua: `${nextFenceLua('KEYS[2]', 'ARGV[3]')}
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return tonumber(fence) end return 0`,
    releaseLua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
    acquireArgs: (lockKey, fenceKey, token) => [lockKey, fenceKey, token, LEASE_MS, clockMicros()],
    releaseArgs: (lockKey, token) => [lockKey, token],
  },
  {
    name: '3. + lock value with holder',
    acquireLua: `${nextFenceLua('KEYS[2]', 'ARGV[4]')}
if redis.call('SET', KEYS[1], '-' .. ARGV[1] .. '|' .. fence .. '|' .. ARGV[3], 'PX', ARGV[2], 'NX') then return tonumber(fence) end return 0`,
    releaseLua: `local value = redis.call('GET', KEYS[1])
if value and ${heldByLua('value', 'ARGV[1]')} then return redis.call('DEL', KEYS[1]) end return 0`,
    acquireArgs: (lockKey, fenceKey, token) => [lockKey, fenceKey, token, LEASE_MS, HOLDER, clockMicros()],
    releaseArgs: (lockKey, token) => [lockKey, token],
  },
  {
    name: '4. library scripts',
    acquireLua: ACQUIRE_SCRIPT.plain.lua,
    releaseLua: RELEASE_SCRIPT.plain.lua,
    acquireArgs: (lockKey, fenceKey, token) => [lockKey, fenceKey, token, LEASE_MS, HOLDER, clockMicros()],
    releaseArgs: (lockKey, token) => [lockKey, token, 0, releaseTail + clockMicros()],
  },
];

async function serverMicros(admin: Redis): Promise<{ cpu: number; script: number }> {
  const cpu = await admin.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(cpu)?.[1] ?? NaN);
  const stats = await admin.info('commandstats');
  const script = Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(stats)?.[1] ?? 0);
  return { cpu: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6, script };
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 12);
  const durationMs = Number(process.argv[3] ?? 1_500);
  const target = await openRedisTarget();
  const client = openBenchRedis(target.url);
  const admin = new Redis(target.url);
  const shas = await Promise.all(
    STEPS.map(async (step) => ({
      acquire: (await client.script('LOAD', step.acquireLua)) as string,
      release: (await client.script('LOAD', step.releaseLua)) as string,
    })),
  );
  const cpu = STEPS.map(() => [] as number[]);
  const script = STEPS.map(() => [] as number[]);
  const node = STEPS.map(() => [] as number[]);
  const run = async (index: number, ms: number): Promise<number> => {
    const step = STEPS[index]!;
    const sha = shas[index]!;
    const stopAt = performance.now() + ms;
    let pairs = 0;
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, worker) => {
        const lockKey = `costs:${index}:w${worker}`;
        const fenceKey = layout.fenceKey(lockKey);
        while (performance.now() < stopAt) {
          const token = newToken();
          const granted = (await client.evalsha(sha.acquire, 2, ...step.acquireArgs(lockKey, fenceKey, token))) as number;
          if (!(granted > 0)) throw new Error(`${step.name}: not granted (${granted})`);
          if ((await client.evalsha(sha.release, 1, ...step.releaseArgs(lockKey, token))) !== 1) throw new Error(`${step.name}: not released`);
          pairs++;
        }
      }),
    );
    return pairs;
  };
  try {
    for (let index = 0; index < STEPS.length; index++) await run(index, 300);
    for (let round = 0; round < rounds; round++) {
      const order = STEPS.map((_, index) => index);
      if (round % 2 === 1) order.reverse();
      for (const index of order) {
        globalThis.gc?.();
        const before = await serverMicros(admin);
        const nodeBefore = process.cpuUsage();
        const pairs = await run(index, durationMs);
        const nodeCpu = process.cpuUsage(nodeBefore);
        const after = await serverMicros(admin);
        node[index]!.push((nodeCpu.user + nodeCpu.system) / pairs);
        cpu[index]!.push((after.cpu - before.cpu) / pairs);
        script[index]!.push((after.script - before.script) / pairs);
      }
      process.stdout.write(`round ${round + 1}/${rounds}\n`);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(
      'Per uncontended pair, µs (medians over rounds), each with its step over the one before: Redis CPU; script time (EVALSHA); ' +
        'Node CPU of this process (ioredis writing the arguments and parsing the replies; the same loop in every step)',
    );
    const signed = (value: number) => (value >= 0 ? '+' : '') + value.toFixed(2);
    STEPS.forEach((step, index) => {
      const cells = [cpu, script, node].map((series) => {
        const value = median(series[index]!);
        const before = index === 0 ? value : median(series[index - 1]!);
        return `${value.toFixed(2).padStart(6)} ${signed(value - before)}`;
      });
      console.log(`${step.name.padEnd(30)} ${cells.join('   ')}`);
    });
  } finally {
    client.disconnect();
    admin.disconnect();
    await target.stop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
