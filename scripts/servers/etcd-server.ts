import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './redis-server';
import { stopProcess } from './server-probes';

/** One etcd member process owned by a test; its data dir and ports survive `kill()` so `start()` can bring it back. */
export interface EtcdMember {
  readonly name: string;
  /** `http://127.0.0.1:<port>`: what clients connect to. */
  readonly clientUrl: string;
  readonly peerUrl: string;
  /** The pid of the running process (undefined while stopped). */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGKILL, as a crashed machine: no goodbye to the peers. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGSTOP: the member stops answering but keeps its sockets open, like a stalled machine. */
  pause(): void;
  resume(): void;
  /** Starts the member again with its data dir; resolves once it serves requests (which needs a quorum). */
  start(): Promise<void>;
}

/** A private etcd cluster (one member, or three) on free loopback ports, data dirs in tmp. */
export interface EtcdCluster {
  readonly members: readonly EtcdMember[];
  /** Every member's client URL, in member order. */
  readonly endpoints: string[];
  /** The member that currently leads (read from each member's `etcd_server_is_leader` metric). */
  leader(): Promise<EtcdMember>;
  /** A counter from the member's Prometheus metrics (say `etcd_debugging_mvcc_events_total`). */
  metric(member: EtcdMember, name: string): Promise<number>;
  /** Kills every member by pid and removes the data dirs. */
  stop(): Promise<void>;
}

export interface EtcdClusterOptions {
  /** @default 1 */
  readonly size?: number;
  /**
   * Raft timing. etcd's minimum lease TTL is 1.5 election timeouts rounded up to whole seconds: the
   * defaults (100 / 1000) give 2 s, as on a stock server.
   */
  readonly heartbeatMs?: number;
  readonly electionMs?: number;
}

export function findEtcdBinary(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'etcd');
    if (dir && existsSync(candidate)) return candidate;
  }
  return existsSync('/usr/bin/etcd') ? '/usr/bin/etcd' : undefined;
}

/**
 * Starts Debian's etcd (3.4) with `size` members that know each other from the start, and resolves once
 * every member is healthy (a leader is elected). Ports are picked free; a start that loses a port race
 * is retried with new ports.
 */
export async function startEtcdCluster(options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  const binary = findEtcdBinary();
  if (!binary) throw new Error('etcd not found on PATH: install it (apt-get install etcd-server).');
  const size = options.size ?? 1;
  for (let attempt = 0; ; attempt++) {
    const root = mkdtempSync(join(tmpdir(), 'lock-etcd-'));
    const specs = await Promise.all(
      Array.from({ length: size }, async (_, i) => ({
        name: `m${i + 1}`,
        clientUrl: `http://127.0.0.1:${await freePort()}`,
        peerUrl: `http://127.0.0.1:${await freePort()}`,
        dataDir: join(root, `m${i + 1}`),
      })),
    );
    const initialCluster = specs.map((spec) => `${spec.name}=${spec.peerUrl}`).join(',');
    const token = `lock-test-${randomBytes(4).toString('hex')}`;
    const members = specs.map(
      (spec) =>
        new MemberProcess(binary, [
          '--name', spec.name,
          '--data-dir', spec.dataDir,
          '--listen-client-urls', spec.clientUrl,
          '--advertise-client-urls', spec.clientUrl,
          '--listen-peer-urls', spec.peerUrl,
          '--initial-advertise-peer-urls', spec.peerUrl,
          '--initial-cluster', initialCluster,
          '--initial-cluster-state', 'new',
          '--initial-cluster-token', token,
          '--heartbeat-interval', String(options.heartbeatMs ?? 100),
          '--election-timeout', String(options.electionMs ?? 1_000),
          '--logger', 'zap',
          '--log-level', 'error',
        ], spec),
    );
    try {
      await Promise.all(members.map((member) => member.start()));
    } catch (error) {
      await Promise.all(members.map((member) => member.kill()));
      rmSync(root, { recursive: true, force: true });
      if (attempt < 2) continue;
      throw error;
    }
    return {
      members,
      endpoints: members.map((member) => member.clientUrl),
      leader: async () => {
        for (const member of members) {
          if (member.running && (await scrape(member.clientUrl, 'etcd_server_is_leader').catch(() => 0)) === 1) return member;
        }
        throw new Error('no etcd member reports itself leader');
      },
      metric: (member, name) => scrape(member.clientUrl, name),
      stop: async () => {
        await Promise.all(members.map((member) => member.kill()));
        rmSync(root, { recursive: true, force: true });
      },
    };
  }
}

class MemberProcess implements EtcdMember {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  private child?: ChildProcess;
  private output = '';

  constructor(
    private readonly binary: string,
    private readonly args: string[],
    spec: { name: string; clientUrl: string; peerUrl: string },
  ) {
    this.name = spec.name;
    this.clientUrl = spec.clientUrl;
    this.peerUrl = spec.peerUrl;
  }

  get pid(): number | undefined {
    return this.running ? this.child!.pid : undefined;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.output = '';
    const child = spawn(this.binary, this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    // If the test process exits without stopping it (a crashed worker), the member must not outlive it.
    const killOnExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', killOnExit);
    child.once('exit', () => process.off('exit', killOnExit));
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString()).slice(-2_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) =>
        reject(new Error(`etcd ${this.name} exited (${code ?? signal}) before it was healthy: ${this.output.trim()}`)),
      ),
    );
    exited.catch(() => undefined);
    // A cluster becomes healthy once its members found each other; give up after a minute.
    const deadline = Date.now() + 60_000;
    await Promise.race([exited, this.untilHealthy(deadline)]);
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await gone;
  }

  pause(): void {
    if (this.running) stopProcess(this.child!);
  }

  resume(): void {
    if (this.running) this.child!.kill('SIGCONT');
  }

  private async untilHealthy(deadline: number): Promise<void> {
    while (this.running) {
      if (await isHealthy(this.clientUrl)) return;
      if (Date.now() > deadline) throw new Error(`etcd ${this.name} not healthy within a minute: ${this.output.trim()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

function httpGet(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = get(url, { timeout: 2_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(body));
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${url} timed out`)));
    request.on('error', reject);
  });
}

async function isHealthy(clientUrl: string): Promise<boolean> {
  try {
    return (JSON.parse(await httpGet(`${clientUrl}/health`)) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

async function scrape(clientUrl: string, name: string): Promise<number> {
  const body = await httpGet(`${clientUrl}/metrics`);
  const line = body.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  if (!line) throw new Error(`metric ${name} not found at ${clientUrl}`);
  return Number(line.slice(name.length + 1));
}
