import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** A private redis-server process owned by a test (or by the whole run). */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** SIGSTOP: the server stops answering but keeps its sockets, like a stalled primary. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export function findRedisServerBinary(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'redis-server');
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts redis-server from PATH on a loopback port (a free one unless `port` is given, as when a drill
 * restarts "the same" server) and resolves once it accepts connections.
 */
export async function startRedisServer(options: { port?: number } = {}): Promise<RedisServer> {
  const binary = findRedisServerBinary();
  if (!binary) {
    throw new Error('redis-server not found on PATH: install it (apt-get install redis-server) or set REDIS_URL.');
  }
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const dir = mkdtempSync(join(tmpdir(), 'lock-redis-'));
    const child = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      await waitUntilReady(child);
    } catch (error) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      if (attempt < 3 && options.port === undefined) continue;
      throw error;
    }
    child.stdout!.resume();
    child.stderr!.resume();
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      pid: child.pid!,
      pause: () => child.kill('SIGSTOP'),
      resume: () => child.kill('SIGCONT'),
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGCONT');
          child.kill('SIGKILL');
          await exited;
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}

function waitUntilReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`redis-server exited with ${code} before it was ready: ${output.slice(-500)}`));
    };
    const cleanup = (): void => {
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
}
