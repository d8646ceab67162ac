/** Command-line options of `npm run demo`. */
export interface DemoOptions {
  readonly instances: number;
  readonly seconds: number;
  readonly concurrency: number;
  /** Print the summary as JSON too (for the test that runs the demo). */
  readonly json: boolean;
  /** Lease of a payment: short, so the pause drill outlasts it within a few seconds. */
  readonly payLeaseMs: number;
  readonly cronEverySeconds: number;
}

export function parseDemoOptions(argv: string[]): DemoOptions {
  const flag = (name: string): string | undefined => {
    const index = argv.indexOf(`--${name}`);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  const short = argv.includes('--short');
  const options: DemoOptions = {
    instances: Number(flag('instances') ?? 3),
    seconds: Number(flag('seconds') ?? (short ? 10 : 25)),
    concurrency: Number(flag('concurrency') ?? (short ? 12 : 24)),
    json: argv.includes('--json'),
    payLeaseMs: 1_500,
    cronEverySeconds: 2,
  };
  if (!(options.instances >= 2) || !(options.seconds >= 6) || !(options.concurrency >= 1)) {
    throw new Error('Usage: npm run demo -- [--short] [--seconds N>=6] [--instances N>=2] [--concurrency N] [--json]');
  }
  return options;
}
