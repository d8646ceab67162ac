import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface PostgresServer {
  readonly url: string;
  stop(): Promise<void>;
}

const SCRIPT = join(__dirname, 'embedded-postgres.mjs');

/** A private PostgreSQL on a free loopback port; DATABASE_URL points the tests at an existing one instead. */
export async function startPostgresServer(): Promise<PostgresServer> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => undefined };
  const child = spawn(process.execPath, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    void exited.then((code) => reject(new Error(`embedded postgres exited with ${code}: ${stderr.trim()}`)));
  });
  const { url } = JSON.parse(await firstLine) as { url: string };
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
