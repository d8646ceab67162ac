import type { OpKind } from './op-plan';

/** Everything an application process of the run is told, as JSON in TORTURE_WORKER. */
export interface WorkerConfig {
  readonly caseName: string;
  readonly seed: number;
  readonly slot: number;
  readonly incarnation: number;
  /** `a<slot>.<incarnation>`: the actor in the history and the `holder` the store records. */
  readonly label: string;
  readonly historyFile: string;
  /** The module options besides the workload's own (store, connection, fair, replicas, keyPrefix, ...). */
  readonly moduleOptions: Record<string, unknown>;
  readonly register: { readonly kind: 'redis'; readonly url: string; readonly prefix: string } | { readonly kind: 'postgres'; readonly url: string };
  readonly keys: WorkloadKeys;
  /** The lease lengths the operations choose from; the first one is the decorated methods'. */
  readonly leaseMs: readonly number[];
  readonly loops: number;
  readonly mix: Readonly<Partial<Record<OpKind, number>>>;
  /** The case's deployment must be refused at startup (`TortureCase.refusedAtStartup`): a refusal ends the process. */
  readonly refusedAtStartup: boolean;
}

/**
 * Hot keys every loop fights over; warm keys `warm:<label>:<n>` that only their process' `pair`
 * operation waits for (see `drawPlan`), over `warmSlots` application slots; many cold ones that are
 * mostly free. The shaped operations (cases whose mix has them) use keys of their own, one shape per key
 * as docs/lock-shapes.md advises: read/write keys and semaphore keys (`SHARED_PERMITS` each).
 */
export interface WorkloadKeys {
  readonly hot: readonly string[];
  readonly warmSlots: number;
  readonly cold: readonly string[];
  readonly readWrite: readonly string[];
  readonly semaphores: readonly string[];
}

/** Every warm key a run can use (the first three incarnations of each slot): PostgreSQL registers need their rows first. */
export function allWarmKeys(keys: WorkloadKeys): string[] {
  const out: string[] = [];
  for (let slot = 0; slot < keys.warmSlots; slot++) for (let inc = 1; inc <= 9; inc++) for (const n of [1, 2]) out.push(`warm:a${slot}.${inc}:${n}`);
  return out;
}

export function workerLabel(slot: number, incarnation: number): string {
  return `a${slot}.${incarnation}`;
}
