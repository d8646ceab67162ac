import { freePorts, startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { askRedis } from '../../scripts/servers/server-probes';
import { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store';

/**
 * `count` private redis-server processes on free loopback ports, without persistence (the test setup's
 * default): the independent masters of a Redlock store. Each can be SIGKILLed and started again, empty, on
 * its own port, by pid.
 */
export class RedlockMasters {
  private constructor(
    private readonly ports: number[],
    private readonly servers: Array<RedisServer | undefined>,
    private readonly envs: Array<NodeJS.ProcessEnv | undefined>,
  ) {}

  /** `envOf(i)`: more environment for master i (libfaketime for a drill that moves its clock), kept on restarts. */
  static async start(count: number, envOf: (index: number) => NodeJS.ProcessEnv | undefined = () => undefined): Promise<RedlockMasters> {
    const ports = await freePorts(count);
    const envs = ports.map((_, i) => envOf(i));
    const servers = await Promise.all(ports.map((port, i) => startRedisServer({ port, env: envs[i] })));
    return new RedlockMasters(ports, servers, envs);
  }

  get urls(): string[] {
    return this.ports.map((port) => `redis://127.0.0.1:${port}`);
  }

  /** SIGKILL, as a crash: the master's keys are gone with it. */
  async kill(index: number): Promise<void> {
    await this.servers[index]?.stop();
    this.servers[index] = undefined;
  }

  /** A master that crashed comes back on its port with nothing (no AOF, no RDB: the published critique). */
  async restartEmpty(index: number): Promise<void> {
    await this.kill(index);
    this.servers[index] = await startRedisServer({ port: this.ports[index]!, env: this.envs[index] });
  }

  /** One question to master `index`. */
  ask<T>(index: number, query: Parameters<typeof askRedis<T>>[1]): Promise<T> {
    return askRedis(this.ports[index]!, query);
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server?.stop()));
  }
}

export function redlockStore(masters: RedlockMasters, keyPrefix: string, commandTimeoutMs = 5_000): RedlockLockStore {
  return new RedlockLockStore(masters.urls, { keyPrefix, commandTimeoutMs });
}
