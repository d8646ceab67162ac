import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLI = join(__dirname, '../../lib/runbook/cli.ts');
const REGISTER = join(__dirname, '../support/register-ts.cjs');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the runbook CLI from source as an operator would (`npx nestjs-distributed-lock …`), with `env` over
 * this process' environment; resolves with its exit code and output whether it succeeded or not.
 */
export async function runbookCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['-r', REGISTER, CLI, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
