import type { Redis } from 'ioredis';

/** Calls per command name, as in `INFO commandstats` (script-internal calls included). */
export type CommandCounts = ReadonlyMap<string, number>;

/** The bench's own admin commands, never charged to a contender. */
const BENCH_COMMANDS = new Set(['info', 'echo']);

export async function readCommandStats(admin: Redis): Promise<CommandCounts> {
  const text = await admin.info('commandstats');
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts.set(match[1]!, Number(match[2]));
  return counts;
}

export function commandDelta(before: CommandCounts, after: CommandCounts): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, calls] of after) {
    if (BENCH_COMMANDS.has(name)) continue;
    const added = calls - (before.get(name) ?? 0);
    if (added > 0) delta.set(name, added);
  }
  return delta;
}

export function totalCalls(counts: ReadonlyMap<string, number>, only?: readonly string[]): number {
  let total = 0;
  for (const [name, calls] of counts) if (!only || only.includes(name)) total += calls;
  return total;
}

/** Measures the server commands issued while `work` runs. */
export async function countCommands<T>(admin: Redis, work: () => Promise<T>): Promise<{ result: T; commands: Map<string, number> }> {
  const before = await readCommandStats(admin);
  const result = await work();
  const after = await readCommandStats(admin);
  return { result, commands: commandDelta(before, after) };
}

/** CPU seconds the Redis server has used (user + system, main and background threads). */
export async function readServerCpuSeconds(admin: Redis): Promise<number> {
  const text = await admin.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}
