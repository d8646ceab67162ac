import { fork, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import type { FaultKind, Injector } from './faults/fault-kinds';
import { choose, hold, lifted } from './topology/topology';
import { workerLabel, type WorkerConfig } from './worker/worker-config';

const REGISTER = join(__dirname, 'support/register-ts-cached.cjs');
const WORKER = join(__dirname, 'worker/worker.ts');

/** How long an application process may take to start (transpiling the library on a loaded box). */
const START_BOUND_MS = 90_000;
/** How long a stopping process may take to finish its operations, close and exit. */
export const STOP_BOUND_MS = 30_000;

type RecordFn = (record: { type: 'app'; what: string; label: string; slot: number; [field: string]: unknown }) => void;

interface Running {
  readonly child: ChildProcess;
  readonly label: string;
  readonly exited: Promise<void>;
}

/**
 * The case's application processes, one per slot; a killed one is replaced by a new incarnation. Every
 * signal sent and every exit is recorded in the parent's history, since a killed process cannot say so.
 */
export class AppFleet {
  private readonly running = new Map<number, Running>();
  private readonly incarnations = new Map<number, number>();

  constructor(
    private readonly slots: number,
    private readonly configFor: (slot: number, incarnation: number, label: string) => WorkerConfig,
    private readonly record: RecordFn,
    private readonly stderrFile: string,
  ) {}

  /** Starts every slot's first incarnation; their workloads wait for `go()`, so that they begin together. */
  async startAll(): Promise<void> {
    await Promise.all(Array.from({ length: this.slots }, (_, slot) => this.start(slot, false)));
  }

  /** Starts every slot's application where each must be refused at startup: waits for each to exit or start. */
  async startAllRefused(): Promise<void> {
    await Promise.allSettled(Array.from({ length: this.slots }, (_, slot) => this.start(slot, false)));
  }

  go(): void {
    for (const { child } of this.running.values()) child.send({ command: 'go' });
  }

  /** Starts the slot's next incarnation; resolves once its application is up (and, with `go`, working). */
  async start(slot: number, go = true): Promise<void> {
    const incarnation = (this.incarnations.get(slot) ?? 0) + 1;
    this.incarnations.set(slot, incarnation);
    const label = workerLabel(slot, incarnation);
    const stderr = openSync(this.stderrFile, 'a');
    const child = fork(WORKER, [], {
      execArgv: ['-r', REGISTER],
      env: { ...process.env, TORTURE_WORKER: JSON.stringify(this.configFor(slot, incarnation, label)) },
      stdio: ['ignore', 'ignore', stderr, 'ipc'],
    });
    closeSync(stderr);
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        this.record({ type: 'app', what: 'exited', label, slot, code, signal });
        resolve();
      }),
    );
    this.running.set(slot, { child, label, exited });
    this.record({ type: 'app', what: 'spawned', label, slot, pid: child.pid });
    await this.message(child, (m) => m.ready === true, START_BOUND_MS, `${label} to start`);
    this.record({ type: 'app', what: 'ready', label, slot, pid: child.pid });
    if (go) child.send({ command: 'go' });
  }

  /** The application faults: SIGSTOP (sometimes past the lease), SIGKILL and a restart, app.close(). */
  injectors(leaseMaxMs: number): Partial<Record<FaultKind, Injector>> {
    const slots = Array.from({ length: this.slots }, (_, slot) => slot);
    return {
      'app-pause': async (fault) => {
        const slot = choose(slots, fault.pick);
        const { child, label } = await this.alive(slot);
        this.record({ type: 'app', what: 'sigstop', label, slot });
        child.kill('SIGSTOP');
        await hold(fault.durationMs);
        child.kill('SIGCONT');
        this.record({ type: 'app', what: 'sigcont', label, slot });
        return lifted(label, fault.durationMs > leaseMaxMs ? 'past its lease' : 'within its lease');
      },
      'app-kill': async (fault) => {
        const slot = choose(slots, fault.pick);
        const { child, label, exited } = await this.alive(slot);
        this.record({ type: 'app', what: 'sigkill', label, slot });
        child.kill('SIGKILL');
        await exited;
        await hold(fault.durationMs);
        const end = Date.now();
        await this.start(slot);
        return { target: label, end, recovered: Date.now(), detail: `restarted as ${this.running.get(slot)!.label}` };
      },
      'app-close': async (fault) => {
        const slot = choose(slots, fault.pick);
        const { child, label } = await this.alive(slot);
        this.record({ type: 'app', what: 'close-asked', label, slot });
        child.send({ command: 'reopen' });
        await this.message(child, (m) => m.reopened === true, START_BOUND_MS, `${label} to reopen`);
        return lifted(label, 'app.close() mid-work, new application in the same process');
      },
    };
  }

  /**
   * The slot's process, replaced first by its next incarnation if it exited on its own (a crash, which the
   * history shows and (f) reports): the run goes on, and faults keep reaching a live application.
   */
  private async alive(slot: number): Promise<Running> {
    const current = this.running.get(slot)!;
    if (current.child.exitCode === null && current.child.signalCode === null) return current;
    await this.start(slot);
    return this.running.get(slot)!;
  }

  /** Asks every process to finish and waits for it to exit by itself; one that does not is recorded and killed. */
  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.running.entries()].map(async ([slot, { child, label, exited }]) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        this.record({ type: 'app', what: 'stop-asked', label, slot });
        child.send({ command: 'stop' }, () => undefined);
        let timer: NodeJS.Timeout | undefined;
        const stuck = new Promise<'stuck'>((resolve) => (timer = setTimeout(() => resolve('stuck'), STOP_BOUND_MS)));
        if ((await Promise.race([exited, stuck])) === 'stuck') {
          this.record({ type: 'app', what: 'stuck', label, slot });
          child.kill('SIGKILL');
          await exited;
        }
        clearTimeout(timer);
      }),
    );
  }

  /** Clean-up after a failed run: every process still there is killed by pid. */
  async killAll(): Promise<void> {
    await Promise.all(
      [...this.running.entries()].map(async ([slot, { child, label, exited }]) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        this.record({ type: 'app', what: 'sigkill', label, slot });
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exited;
      }),
    );
  }

  private message(child: ChildProcess, match: (m: { ready?: boolean; reopened?: boolean }) => boolean, boundMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`timed out after ${boundMs} ms waiting for ${what}`)), boundMs);
      const onMessage = (m: { ready?: boolean; reopened?: boolean }): void => {
        if (match(m)) finish();
      };
      const onExit = (): void => finish(new Error(`process exited while waiting for ${what}`));
      const finish = (error?: Error): void => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (error) reject(error);
        else resolve();
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  }
}
