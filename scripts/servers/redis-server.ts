import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { stopProcess } from './server-probes';

/** A private redis-server (or redis-sentinel) process owned by a test (or by the whole run). */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Its data directory (config files, nodes.conf), removed by stop(). */
  readonly dir: string;
  /** SIGSTOP: the server stops answering but keeps its sockets, like a stalled primary. */
  pause(): void;
  resume(): void;
  /** SIGKILL and clean-up; idempotent. */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** A fixed port, as when a drill restarts "the same" server; a free one otherwise. */
  readonly port?: number;
  /** Extra command-line options (`--cluster-enabled yes`, `--replicaof 127.0.0.1 7000`, ...). */
  readonly args?: (port: number, dir: string) => string[];
  /** 'sentinel' starts `redis-sentinel` with a config file the callback writes into `dir`. */
  readonly mode?: 'server' | 'sentinel';
  /** Writes the sentinel's config file (it must be writable: sentinels rewrite it) and returns its path. */
  readonly sentinelConfig?: (port: number, dir: string) => string;
  /** More environment for the process (a drill's LD_PRELOAD of libfaketime, to move its clock). */
  readonly env?: NodeJS.ProcessEnv;
}

export function findBinary(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

export function findRedisServerBinary(): string | undefined {
  return findBinary('redis-server');
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

/** `count` distinct free loopback ports (a port freed by one probe can come back from the next). */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/**
 * Starts redis-server from PATH on a loopback port and resolves once it accepts connections. A port taken
 * between the probe and the start is retried on another free port (never when `port` is fixed).
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const sentinel = options.mode === 'sentinel';
  const binaryName = sentinel ? 'redis-sentinel' : 'redis-server';
  const binary = findBinary(binaryName);
  if (!binary) {
    throw new Error(`${binaryName} not found on PATH: install it (apt-get install ${binaryName}) or set REDIS_URL.`);
  }
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const dir = mkdtempSync(join(tmpdir(), sentinel ? 'lock-sentinel-' : 'lock-redis-'));
    const args = sentinel
      ? [options.sentinelConfig!(port, dir)]
      : ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...(options.args?.(port, dir) ?? [])];
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env && { ...process.env, ...options.env } });
    try {
      await waitUntilReady(child, sentinel ? '+monitor master' : 'Ready to accept connections');
    } catch (error) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      if (attempt < 3 && options.port === undefined) continue;
      throw error;
    }
    child.stdout!.resume();
    child.stderr!.resume();
    // If the test process exits without stopping it (a crashed worker), the server must not outlive it.
    const killOnExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', killOnExit);
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      pid: child.pid!,
      dir,
      pause: () => stopProcess(child),
      resume: () => child.kill('SIGCONT'),
      stop: async () => {
        process.off('exit', killOnExit);
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

function waitUntilReady(child: ChildProcess, marker: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes(marker)) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`${child.spawnfile} exited with ${code} before it was ready: ${output.slice(-500)}`));
    };
    const cleanup = (): void => {
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
}
