import 'reflect-metadata';
import { resolve } from 'node:path';
import { parseArguments } from './cli-arguments';
import { planFaults } from './faults/fault-plan';
import { formatTable } from './report/table';
import { formatViolations } from './report/violations';
import { runCase, type CaseRun } from './run-case';
import type { TortureCase } from './cases';

export interface TortureOptions {
  readonly cases: readonly TortureCase[];
  readonly seeds: readonly number[];
  readonly minutes: number;
  readonly outDir: string;
  readonly timeline?: string;
  readonly log?: (line: string) => void;
}

/** Every case × seed, one after another (each has its own servers); the runs with their checks. */
export async function runTorture(options: TortureOptions): Promise<CaseRun[]> {
  const runs: CaseRun[] = [];
  for (const def of options.cases) {
    for (const seed of options.seeds) {
      runs.push(await runCase(def, seed, { minutes: options.minutes, outDir: resolve(options.outDir), ...(options.log ? { log: options.log } : {}) }));
    }
  }
  return runs;
}

/** The table, then each failed run's violations with excerpts, timeline and replay command. */
export function report(runs: readonly CaseRun[], timeline?: string): string {
  const parts = [formatTable(runs)];
  for (const run of runs) {
    const text = formatViolations(run, timeline);
    if (text) parts.push(text);
  }
  return parts.join('\n\n');
}

export function failed(runs: readonly CaseRun[]): boolean {
  return runs.some((run) => run.error !== undefined || run.result.violations.length > 0);
}

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  if (args.planOnly) {
    for (const def of args.cases) {
      for (const seed of args.seeds) {
        const plan = planFaults(seed, def, args.minutes * 60_000);
        console.log(`${def.name} seed ${seed}: ${plan.map((f) => `+${(f.at / 1_000).toFixed(1)}s ${f.kind}(${f.durationMs} ms)`).join(', ')}`);
      }
    }
    return;
  }
  const runs = await runTorture({ ...args, log: (line) => console.error(line) });
  console.log(report(runs, args.timeline));
  process.exitCode = failed(runs) ? 1 : 0;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 2;
  });
}
