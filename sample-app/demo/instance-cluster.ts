import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../scripts/servers/redis-server.js';

const REGISTER = join(__dirname, '../../test/support/register-ts.cjs');
const MAIN = join(__dirname, '../src/main.ts');

export interface Instance {
  readonly name: string;
  readonly url: string;
  readonly process: ChildProcess;
  readonly logFile: string;
  paused: boolean;
}

/** Sample-app instances as separate processes, each on its own port, logging to its own file. */
export class InstanceCluster {
  readonly instances: Instance[] = [];

  constructor(
    private readonly logDir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Starts one instance and resolves when it listens (it says so over IPC). */
  async start(name: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Instance> {
    const port = await freePort();
    const logFile = join(this.logDir, `${name}.log`);
    const log = createWriteStream(logFile);
    const child = fork(MAIN, [], {
      execArgv: ['-r', REGISTER],
      env: { ...process.env, ...this.env, ...extraEnv, PORT: String(port), INSTANCE_NAME: name },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    const instance: Instance = { name, url: `http://127.0.0.1:${port}`, process: child, logFile, paused: false };
    this.instances.push(instance);
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: { type?: string }): void => {
        if (message?.type !== 'ready') return;
        child.off('exit', onExit);
        child.off('message', onMessage);
        resolve();
      };
      const onExit = (code: number | null): void =>
        reject(new Error(`${name} exited (${code}) during startup:\n${this.tail(instance)}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
    return instance;
  }

  pause(instance: Instance): void {
    instance.process.kill('SIGSTOP');
    instance.paused = true;
  }

  resume(instance: Instance): void {
    instance.process.kill('SIGCONT');
    instance.paused = false;
  }

  tail(instance: Instance, lines = 30): string {
    try {
      return readFileSync(instance.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Stops every instance, paused ones included; SIGKILL for any that does not exit in time. */
  async stopAll(): Promise<void> {
    await Promise.all(
      this.instances.map(async ({ process: child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}
