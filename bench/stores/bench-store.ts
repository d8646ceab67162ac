import type { LockModuleOptions } from '../../lib/index.js';
import type { BenchContext } from '../scenarios/bench-context.js';

/**
 * One lock store the stores scenario (7) compares, always through this library's `LockService`: what
 * changes from row to row is only where the leases live. To add a store, write `<id>.bench-store.ts` and
 * list it in `bench-stores.ts`.
 */
export interface BenchStore {
  /** Stable id, used in the JSON results and on the command line (`--stores=`). */
  readonly id: string;
  readonly label: string;
  /** Why it cannot run on this machine, if it cannot. */
  unavailable?(): string | undefined;
  /** Finds or starts its server for the whole scenario. */
  start(context: BenchContext): Promise<StartedBenchStore>;
}

export interface StartedBenchStore {
  /** Server and version, for the report. */
  readonly description: string;
  /** Module options for one application instance (several instances share the key prefix). */
  options(keyPrefix: string): LockModuleOptions;
  stop(): Promise<void>;
}
