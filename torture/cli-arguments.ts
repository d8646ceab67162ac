import { CASES, caseNamed, type TortureCase } from './cases';

export interface TortureArguments {
  readonly cases: readonly TortureCase[];
  readonly seeds: readonly number[];
  readonly minutes: number;
  readonly timeline?: string;
  readonly outDir: string;
  /** Print each run's fault plan and stop: what a seed decides, without running it. */
  readonly planOnly: boolean;
}

/** Short by default: a quick look at every case; `--minutes 30` is the long run of docs/reliability.md. */
export const DEFAULT_MINUTES = 0.4;

export const USAGE = `npm run torture -- [--seed S | --seeds a,b,c] [--only case[,case]] [--minutes N] [--timeline out.ndjson] [--out dir] [--plan]
cases: ${CASES.map((c) => c.name).join(', ')}`;

export function parseArguments(argv: readonly string[]): TortureArguments {
  let cases: readonly TortureCase[] = CASES;
  let seeds: number[] = [1];
  let minutes = DEFAULT_MINUTES;
  let timeline: string | undefined;
  let outDir = '.tmp/torture';
  let planOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
      return next;
    };
    if (flag === '--seed') seeds = [integer(flag, value())];
    else if (flag === '--seeds') seeds = value().split(',').map((s) => integer(flag, s));
    else if (flag === '--only') cases = value().split(',').map(caseNamed);
    else if (flag === '--minutes') minutes = Number(value());
    else if (flag === '--timeline') timeline = value();
    else if (flag === '--out') outDir = value();
    else if (flag === '--plan') planOnly = true;
    else throw new Error(`unknown argument ${flag}\n${USAGE}`);
  }
  if (!(minutes > 0)) throw new Error(`--minutes must be a positive number\n${USAGE}`);
  if (timeline && cases.length * seeds.length > 1) throw new Error('--timeline names one file: use it with one case and one seed');
  return { cases, seeds, minutes, ...(timeline ? { timeline } : {}), outDir, planOnly };
}

function integer(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`${flag}: "${text}" is not a whole number`);
  return n;
}
