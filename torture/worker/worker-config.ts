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
}

/**
 * Hot keys every loop fights over; warm keys only the `pair` operation waits for (everyone else makes
 * single attempts on them, so a queue left behind on one is not cleaned up by the next waiter); many cold
 * ones that are mostly free.
 */
export interface WorkloadKeys {
  readonly hot: readonly string[];
  readonly warm: readonly string[];
  readonly cold: readonly string[];
}

export function workerLabel(slot: number, incarnation: number): string {
  return `a${slot}.${incarnation}`;
}
