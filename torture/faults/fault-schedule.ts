import { hold } from '../topology/topology';
import type { FaultKind, Injector, PlannedFault } from './fault-kinds';

const INJECTION_BOUND_MS = 120_000;

type RecordFn = (record: { type: 'fault'; kind: string; target: string; start: number; end: number; recovered: number; detail?: string }) => void;

/**
 * Runs the plan one fault at a time: each starts at its planned time (or as soon as the one before has
 * recovered), and is recorded with its target, start, end and recovery once it is over. An injection that
 * fails (a server that would not come back) is recorded as such and ends the schedule: what follows would
 * not be the planned run.
 */
export async function runFaults(plan: readonly PlannedFault[], injectors: Partial<Record<FaultKind, Injector>>, startedAt: number, record: RecordFn): Promise<void> {
  for (const fault of plan) {
    const wait = startedAt + fault.at - Date.now();
    if (wait > 0) await hold(wait);
    const inject = injectors[fault.kind];
    if (!inject) continue;
    const start = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        inject(fault),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no recovery within ${INJECTION_BOUND_MS} ms`)), INJECTION_BOUND_MS))),
      ]);
      record({ type: 'fault', kind: fault.kind, start, ...result });
    } catch (error) {
      const now = Date.now();
      record({ type: 'fault', kind: fault.kind, target: '?', start, end: now, recovered: now, detail: `injection failed: ${(error as Error).message}` });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}
