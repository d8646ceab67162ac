import type { Spread } from '../support/stats.js';
import { throughputRatio, type ThroughputRow } from './throughput-ratio.js';

export interface OverheadRow {
  readonly entrant: string;
  /** Pairs/s relative to the raw protocol, sequential (scenario 1) and 64 workers (scenario 2). */
  readonly sequentialVsRaw: Spread;
  readonly concurrentVsRaw: Spread;
  /** The same relative to this library's `withLock`, the scoped API the decorator is built around. */
  readonly sequentialVsWithLock: Spread;
  readonly concurrentVsWithLock: Spread;
}

/** Paths compared in scenario 6: the floor, this library's three APIs, and the decorator alternatives. */
const PATHS = ['raw', 'lock-service', 'with-lock', 'lock-decorator', 'nest-redlock', 'murlock'];

/**
 * Scenario 6: what a decorated method costs over `withLock` and over the raw protocol. Derived from the
 * interleaved rounds of scenarios 1 and 2 (same run, same Redis, ratios paired by round) rather than
 * measured a third time.
 */
export function decoratorOverhead(sequential: readonly ThroughputRow[], concurrent: readonly ThroughputRow[]): OverheadRow[] {
  return PATHS.filter((id) => sequential.some((row) => row.entrant === id && !row.error)).map((id) => ({
    entrant: id,
    sequentialVsRaw: throughputRatio(sequential, id, 'raw'),
    concurrentVsRaw: throughputRatio(concurrent, id, 'raw'),
    sequentialVsWithLock: throughputRatio(sequential, id, 'with-lock'),
    concurrentVsWithLock: throughputRatio(concurrent, id, 'with-lock'),
  }));
}
