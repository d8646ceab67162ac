import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server';
import { stopProcess } from './server-probes';

/** Debian's zookeeper package: the server jar (its dependencies are named in its manifest). */
const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
const JAVA = '/usr/bin/java';

/** One ZooKeeper server process owned by a test; its data dir and ports survive `kill()` so `start()` can bring it back. */
export interface ZookeeperMember {
  readonly id: number;
  /** `127.0.0.1:<port>`: what clients connect to. */
  readonly address: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGKILL, as a crashed machine. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts the member again with its data dir; resolves once it serves (which needs a quorum). */
  start(): Promise<void>;
  /** SIGSTOP: the process stays, answers nothing, and its connections stay open. */
  pause(): void;
  /** SIGCONT after `pause()`. */
  resume(): void;
  /** `standalone`, `leader`, `follower`, or undefined while it does not serve (the `srvr` command). */
  mode(): Promise<string | undefined>;
  /** Every watched path with the sessions watching it (the `wchp` command). */
  watchesByPath(): Promise<Map<string, string[]>>;
  /**
   * Watch notifications sent so far: the watchers that every creation, deletion and change of a node, and
   * every change of a node's children, triggered (each one notification to one session; the `mntr` command).
   */
  watchNotifications(): Promise<number>;
}

/** A private ZooKeeper (one standalone server, or an ensemble of three) on free loopback ports, data dirs in tmp. */
export interface ZookeeperEnsemble {
  readonly members: readonly ZookeeperMember[];
  /** The connect string of every member. */
  readonly connect: string;
  /** The member that currently leads (the standalone server for one member). */
  leader(): Promise<ZookeeperMember>;
  /** Kills every member by pid and removes the data dirs. */
  stop(): Promise<void>;
}

export interface ZookeeperEnsembleOptions {
  /** @default 1 */
  readonly size?: number;
  /** `tickTime`: the unit of session timeouts and of the ensemble's failure detection. @default 100 */
  readonly tickMs?: number;
  /** @default 2 ticks (the server's default) */
  readonly minSessionMs?: number;
  /** @default 60 000 */
  readonly maxSessionMs?: number;
}

export function findZookeeper(): boolean {
  return existsSync(ZOOKEEPER_JAR) && existsSync(JAVA);
}

/**
 * Starts Debian's ZooKeeper (3.8) with `size` members that know each other from the start, and resolves
 * once every member serves (an ensemble has elected its leader). Ports are picked free; a start that loses
 * a port race is retried with new ports. Empty lock parents (container nodes) are swept every second.
 */
export async function startZookeeperEnsemble(options: ZookeeperEnsembleOptions = {}): Promise<ZookeeperEnsemble> {
  if (!findZookeeper()) throw new Error(`ZooKeeper not found (${ZOOKEEPER_JAR}, ${JAVA}): install it (apt-get install zookeeper default-jre-headless).`);
  const size = options.size ?? 1;
  const tickMs = options.tickMs ?? 100;
  for (let attempt = 0; ; attempt++) {
    const root = mkdtempSync(join(tmpdir(), 'lock-zookeeper-'));
    const specs = await Promise.all(
      Array.from({ length: size }, async (_, i) => ({
        id: i + 1,
        clientPort: await freePort(),
        peerPort: await freePort(),
        electionPort: await freePort(),
        dataDir: join(root, `m${i + 1}`),
      })),
    );
    const servers = size > 1 ? specs.map((spec) => `server.${spec.id}=127.0.0.1:${spec.peerPort}:${spec.electionPort}`) : [];
    const members = specs.map((spec) => {
      mkdirSync(spec.dataDir, { recursive: true });
      writeFileSync(join(spec.dataDir, 'myid'), `${spec.id}\n`);
      const config = join(spec.dataDir, 'zoo.cfg');
      writeFileSync(
        config,
        [
          `tickTime=${tickMs}`,
          'initLimit=100',
          'syncLimit=20',
          `dataDir=${spec.dataDir}`,
          `clientPort=${spec.clientPort}`,
          'clientPortAddress=127.0.0.1',
          `minSessionTimeout=${options.minSessionMs ?? 2 * tickMs}`,
          `maxSessionTimeout=${options.maxSessionMs ?? 60_000}`,
          'admin.enableServer=false',
          '4lw.commands.whitelist=srvr,ruok,wchp,mntr',
          'forceSync=no',
          ...servers,
        ].join('\n') + '\n',
      );
      return new MemberProcess(spec.id, spec.clientPort, spec.dataDir, config);
    });
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
      connect: members.map((member) => member.address).join(','),
      leader: async () => {
        for (const member of members) {
          const mode = member.running ? await member.mode() : undefined;
          if (mode === 'leader' || mode === 'standalone') return member;
        }
        throw new Error('no ZooKeeper member reports itself leader');
      },
      stop: async () => {
        await Promise.all(members.map((member) => member.kill()));
        rmSync(root, { recursive: true, force: true });
      },
    };
  }
}

class MemberProcess implements ZookeeperMember {
  readonly address: string;
  private child?: ChildProcess;
  private output = '';

  constructor(
    readonly id: number,
    private readonly port: number,
    private readonly dataDir: string,
    private readonly config: string,
  ) {
    this.address = `127.0.0.1:${port}`;
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
    const child = spawn(
      JAVA,
      [
        '-Xmx128m',
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        `-Dzookeeper.log.dir=${this.dataDir}`,
        // Empty lock parents are container nodes: sweep them often, so tests see them go.
        '-Dznode.container.checkIntervalMs=1000',
        '-cp',
        ZOOKEEPER_JAR,
        'org.apache.zookeeper.server.quorum.QuorumPeerMain',
        this.config,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
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
      child.once('exit', (code, signal) => reject(new Error(`ZooKeeper ${this.id} exited (${code ?? signal}) before it served: ${this.output.trim()}`))),
    );
    exited.catch(() => undefined);
    const deadline = Date.now() + 60_000;
    await Promise.race([exited, this.untilServing(deadline)]);
  }

  pause(): void {
    if (this.running) stopProcess(this.child!);
  }

  resume(): void {
    if (this.running) this.child!.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await gone;
  }

  async mode(): Promise<string | undefined> {
    const reply = await fourLetterWord(this.port, 'srvr').catch(() => '');
    return /^Mode: (\w+)/m.exec(reply)?.[1];
  }

  async watchesByPath(): Promise<Map<string, string[]>> {
    const watches = new Map<string, string[]>();
    let path: string | undefined;
    for (const line of (await fourLetterWord(this.port, 'wchp')).split('\n')) {
      if (line.startsWith('\t') && path !== undefined) watches.get(path)!.push(line.trim());
      else if (line.startsWith('/')) watches.set((path = line.trim()), []);
    }
    return watches;
  }

  async watchNotifications(): Promise<number> {
    const reply = await fourLetterWord(this.port, 'mntr');
    let sent = 0;
    for (const [, count] of reply.matchAll(/^zk_sum_node_(?:created|deleted|changed|children)_watch_count\t(\d+)$/gm)) sent += Number(count);
    return sent;
  }

  private async untilServing(deadline: number): Promise<void> {
    while (this.running) {
      if ((await this.mode()) !== undefined) return;
      if (Date.now() > deadline) throw new Error(`ZooKeeper ${this.id} not serving within a minute: ${this.output.trim()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** One of ZooKeeper's four-letter commands on the client port; resolves with the whole reply. */
function fourLetterWord(port: number, word: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(1_000, () => socket.destroy(new Error('no reply')));
    socket.on('connect', () => socket.end(word));
    socket.on('data', (chunk) => (reply += chunk.toString()));
    socket.on('close', () => resolve(reply));
    socket.on('error', reject);
  });
}
