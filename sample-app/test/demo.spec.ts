import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');

interface DemoReport {
  ok: boolean;
  doublePayments: number;
  staleWritesRejected: number;
  cronTicks: number;
  instances: Array<{ name: string; requests: number; cronRuns: number }>;
  checks: Array<{ name: string; ok: boolean; detail: string }>;
}

describe('npm run demo (short mode)', () => {
  it('keeps every invariant with 3 instances, contention, a frozen holder and the cron job', async () => {
    // The demo starts its own Redis and PostgreSQL, so its keys and rows never meet other tests'.
    const env = { ...process.env };
    delete env.REDIS_URL;
    delete env.DATABASE_URL;
    const child = spawn(
      process.execPath,
      ['-r', join(ROOT, 'test/support/register-ts.cjs'), join(ROOT, 'sample-app/demo/demo.ts'), '--short', '--json'],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

    const line = output.split('\n').find((l) => l.startsWith('DEMO_REPORT '));
    if (!line) throw new Error(`demo printed no report (exit ${code}):\n${output.slice(-3_000)}`);
    const report = JSON.parse(line.slice('DEMO_REPORT '.length)) as DemoReport;
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.doublePayments).toBe(0);
    expect(report.staleWritesRejected).toBeGreaterThanOrEqual(1);
    expect(report.cronTicks).toBeGreaterThan(0);
    expect(report.instances).toHaveLength(3);
    expect(report.instances.every((i) => i.requests > 0)).toBe(true);
    expect(code).toBe(0);
  }, 240_000);
});
