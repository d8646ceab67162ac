import 'reflect-metadata';
import type { LockModuleOptions } from '../../lib/index';
import { HistoryFile } from '../history/history-file';
import { REFUSED_EXIT_CODE } from '../history/records';
import { Prng } from '../prng';
import { PostgresFencedRegister, RedisFencedRegister, type FencedRegister } from './fenced-register';
import { drawPlan } from './op-plan';
import { runOperation } from './operations';
import { sleep } from './section';
import { describe, openWorkerApp, type Recorder, type WorkerApp } from './worker-app';
import type { WorkerConfig } from './worker-config';

/**
 * One application instance of the torture run, in its own process: several loops of operations over the
 * case's keys, every step recorded in this process' history file. The parent sends `reopen` (close the
 * application in the middle of work and open a new one) and `stop` (finish, close, and exit on its own:
 * a process that does not exit by itself kept a timer or a socket open).
 */
const config = JSON.parse(process.env.TORTURE_WORKER!) as WorkerConfig;
const history = new HistoryFile(config.historyFile);
const record: Recorder = (entry) => history.write(entry, config.label);

// A parent that died (killed, or the run cut short) leaves nobody to stop this process: it would go on
// working, and loading the machine, for as long as its loops last.
process.on('disconnect', () => process.exit(0));
process.on('unhandledRejection', (reason) => record({ type: 'unhandled', error: describe(reason) }));
process.on('uncaughtException', (error) => {
  record({ type: 'unhandled', error: `uncaught: ${describe(error)}` });
  process.exit(70);
});

const options = {
  ...config.moduleOptions,
  holder: config.label,
  commandTimeoutMs: 1_000,
  shutdownGraceMs: 1_000,
  leaseMs: config.leaseMs[0],
  waitMs: 1_000,
} as LockModuleOptions;

let stopping = false;
let stopRequested!: () => void;
const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
let current: Promise<WorkerApp>;

/** Opens the application; a store that cannot be reached at that moment (a fault) is tried again. */
async function open(): Promise<WorkerApp> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openWorkerApp(options, config.leaseMs[0]!, record);
    } catch (error) {
      // Where the case expects it, the module's refusal of its options is the outcome: said once, and the
      // process ends (cases.ts). Anywhere else it is tried again like any failed start (a refusal that
      // only a fault caused, say), and a lasting one fails the process as before.
      if (config.refusedAtStartup && error instanceof Error && error.name === 'LockConfigError') {
        record({ type: 'proc', what: 'refused', error: describe(error) });
        history.close();
        process.exit(REFUSED_EXIT_CODE);
      }
      record({ type: 'proc', what: 'open-failed', error: describe(error) });
      if (attempt >= 20) throw error;
      await sleep(250);
    }
  }
}

async function close(app: WorkerApp): Promise<void> {
  const started = Date.now();
  record({ type: 'proc', what: 'closing' });
  // app.close() must not reject: a rejection is reported under (f) like an unhandled one.
  await app.close().catch((error: unknown) => record({ type: 'unhandled', error: `app.close() rejected: ${describe(error)}` }));
  record({ type: 'proc', what: 'closed', ms: Date.now() - started });
}

async function loop(index: number, register: FencedRegister, transactions: PostgresFencedRegister | undefined): Promise<void> {
  // One stream per loop and incarnation: what a loop does next never depends on how far another got.
  const prng = new Prng(config.seed, `${config.caseName}/app${config.slot}.${config.incarnation}/loop${index}`);
  for (let n = 0; !stopping; n++) {
    const plan = drawPlan(prng, config.mix, config.keys, config.leaseMs, config.label);
    const app = await current;
    if (stopping) break;
    await runOperation({ app, register, transactions, record, op: `${config.label}:${index}:${n}`, plan });
    await sleep(plan.thinkMs);
  }
}

async function main(): Promise<void> {
  const register: FencedRegister =
    config.register.kind === 'redis' ? new RedisFencedRegister(config.register.url, config.register.prefix) : new PostgresFencedRegister(config.register.url);
  const transactions = register instanceof PostgresFencedRegister ? register : undefined;
  current = open();
  await current;
  record({ type: 'proc', what: 'ready' });
  let go!: () => void;
  const going = new Promise<void>((resolve) => (go = resolve));
  process.on('message', (message: { command?: string }) => {
    if (message.command === 'go') go();
    if (message.command === 'reopen' && !stopping) {
      const previous = current;
      current = (async () => {
        await close(await previous);
        const next = await open();
        record({ type: 'proc', what: 'reopened' });
        return next;
      })();
      void current.then(() => process.send?.({ reopened: true }), () => undefined);
    }
    if (message.command === 'stop') {
      stopping = true;
      record({ type: 'proc', what: 'stopping' });
      stopRequested();
    }
  });
  process.send?.({ ready: true });
  // Every application of the run starts its workload at the parent's word, so that they begin together.
  await Promise.race([going, stopped]);
  const loops = Array.from({ length: config.loops }, (_, i) => loop(i, register, transactions));
  await stopped;
  await Promise.all(loops);
  await close(await current);
  await register.close();
  record({ type: 'proc', what: 'exiting' });
  history.close();
  // Nothing else: the process must now exit by itself. The parent bounds the wait and reports one that
  // does not (a timer or socket the library left open).
  process.disconnect?.();
}

main().catch((error: unknown) => {
  record({ type: 'unhandled', error: `worker failed: ${describe(error)}` });
  process.exit(71);
});
