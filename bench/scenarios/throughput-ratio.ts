import { pairedRatio, type Spread } from '../support/stats.js';

/** A throughput row of scenario 1 or 2. */
export interface ThroughputRow {
  readonly entrant: string;
  readonly pairsPerSecondByRound: number[];
  readonly error?: string;
}

/** `entrant`'s pairs/s over `baseline`'s, paired round by round; an empty spread when either is missing. */
export function throughputRatio(rows: readonly ThroughputRow[], entrant: string, baseline: string): Spread {
  const of = (id: string) => rows.find((row) => row.entrant === id && !row.error)?.pairsPerSecondByRound ?? [];
  return pairedRatio(of(entrant), of(baseline));
}
