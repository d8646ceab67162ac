import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { LockModuleOptions } from '../lib/index';
import { startRedisServer, type RedisServer } from '../scripts/servers/redis-server';
import { AppFleet } from './app-fleet';
import { workloadKeys, type TortureCase } from './cases';
import { check, type CheckResult } from './checker/check';
import { COMMAND_TIMEOUT_MS } from './checker/bounds';
import type { PlannedFault } from './faults/fault-kinds';
import { planFaults } from './faults/fault-plan';
import { runFaults } from './faults/fault-schedule';
import { HistoryFile, readHistory } from './history/history-file';
import { LockSampler } from './sampler/lock-sampler';
import { startTopology } from './topology/start-topology';
import { hold, type Topology } from './topology/topology';
import { PostgresFencedRegister } from './worker/fenced-register';
import { allWarmKeys } from './worker/worker-config';

export interface RunOptions {
  /** Length of the workload, in minutes (the run adds start-up and drain). */
  readonly minutes: number;
  /** Where each run's directory goes (history files, the application processes' stderr). */
  readonly outDir: string;
  readonly log?: (line: string) => void;
}

export interface CaseRun {
  readonly def: TortureCase;
  readonly seed: number;
  readonly dir: string;
  readonly plan: readonly PlannedFault[];
  readonly result: CheckResult;
  /** Set when the harness itself failed (a server that would not start or come back). */
  readonly error?: string;
}

const PREFIX = 'torture:';
const APPS = 3;
const LOOPS = 4;

/**
 * One case, one seed: starts the case's servers, a private register, the sampler and three application
 * processes; runs the fault plan over the workload for the run's length; stops everything by pid
 * (also when something failed); and checks the merged history.
 */
export async function runCase(def: TortureCase, seed: number, options: RunOptions): Promise<CaseRun> {
  const log = options.log ?? (() => undefined);
  const dir = join(options.outDir, `${def.name}-seed${seed}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const history = new HistoryFile(join(dir, 'parent.ndjson'));
  const record = (entry: { type: string; [field: string]: unknown }): void => history.write(entry, 'parent');
  const runMs = Math.round(options.minutes * 60_000);
  const plan = planFaults(seed, def, runMs);
  const keys = workloadKeys(def);
  record({ type: 'run', what: 'start', case: def.name, seed, plan });
  let topology: (Topology & { registerUrl?: string }) | undefined;
  let registerServer: RedisServer | undefined;
  let sampler: LockSampler | undefined;
  let fleet: AppFleet | undefined;
  let error: string | undefined;
  try {
    log(`${def.name} seed ${seed}: starting servers`);
    topology = await startTopology(def, PREFIX, keys.hot[0]!);
    const started = topology;
    let register: { kind: 'redis'; url: string; prefix: string } | { kind: 'postgres'; url: string };
    if (started.registerUrl) {
      await PostgresFencedRegister.prepare(started.registerUrl, [...keys.hot, ...allWarmKeys(keys), ...keys.cold]);
      register = { kind: 'postgres', url: started.registerUrl };
    } else {
      registerServer = await startRedisServer();
      register = { kind: 'redis', url: registerServer.url, prefix: 'register:' };
    }
    const moduleOptions = (slot: number): Record<string, unknown> => ({ ...started.appOptions(slot), ...def.options, keyPrefix: PREFIX });
    // The sampler's module opens first: on PostgreSQL it creates the lease table before the applications race to.
    sampler = await LockSampler.open(
      { ...started.samplerOptions(), keyPrefix: PREFIX, commandTimeoutMs: COMMAND_TIMEOUT_MS, holder: 'sampler' } as LockModuleOptions,
      started.scanQueues ? () => started.scanQueues!(PREFIX) : undefined,
      record,
    );
    fleet = new AppFleet(
      APPS,
      (slot, incarnation, label) => ({
        caseName: def.name,
        seed,
        slot,
        incarnation,
        label,
        historyFile: join(dir, `${label}.ndjson`),
        moduleOptions: moduleOptions(slot),
        register,
        keys,
        leaseMs: def.leaseMs,
        loops: LOOPS,
        mix: def.mix,
        refusedAtStartup: def.refusedAtStartup !== undefined,
      }),
      record,
      join(dir, 'stderr.log'),
    );
    if (def.refusedAtStartup) {
      // Nothing to run: what is checked is that every application refused to start.
      log(`${def.name} seed ${seed}: starting ${APPS} applications, each to be refused at startup`);
      await fleet.startAllRefused();
    } else {
      log(`${def.name} seed ${seed}: starting ${APPS} applications`);
      await fleet.startAll();
      sampler.start();
      started.watchUnplanned?.((fault) => record({ type: 'fault', ...fault }));
      const startedAt = Date.now();
      record({ type: 'run', what: 'workload-start', case: def.name, seed });
      fleet.go();
      log(`${def.name} seed ${seed}: workload for ${runMs} ms, ${plan.length} fault(s)`);
      await runFaults(plan, { ...started.injectors, ...fleet.injectors(Math.max(...def.leaseMs)) }, startedAt, record);
      const left = startedAt + runMs - Date.now();
      if (left > 0) await hold(left);
      record({ type: 'run', what: 'workload-end', case: def.name, seed });
      await fleet.stopAll();
    }
  } catch (failure) {
    error = failure instanceof Error ? failure.message : String(failure);
    log(`${def.name} seed ${seed}: harness error: ${error}`);
  } finally {
    await fleet?.killAll().catch(() => undefined);
    await sampler?.stop().catch(() => undefined);
    await topology?.stop().catch(() => undefined);
    await registerServer?.stop().catch(() => undefined);
    record({ type: 'run', what: 'end', case: def.name, seed });
    history.close();
  }
  const result = check(readHistory(dir), def);
  return { def, seed, dir, plan, result, ...(error ? { error } : {}) };
}
