/** Median with the spread of the repetitions: the median resists one noisy run on a shared machine. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

export function spread(values: readonly number[]): Spread {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return { median: NaN, min: NaN, max: NaN, runs: 0 };
  const sorted = [...finite].sort((a, b) => a - b);
  return { median: quantileOfSorted(sorted, 0.5), min: sorted[0]!, max: sorted[sorted.length - 1]!, runs: sorted.length };
}

/** Quantile by linear interpolation between the closest ranks; NaN for no samples. */
export function quantile(values: readonly number[], q: number): number {
  return quantileOfSorted([...values].sort((a, b) => a - b), q);
}

function quantileOfSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

/** Spread of one field across repetitions. */
export function spreadOf<T>(runs: readonly T[], pick: (run: T) => number): Spread {
  return spread(runs.map(pick));
}

/**
 * Spread of per-round ratios `values[i] / baseline[i]`: both were measured in the same round, moments
 * apart, so a load change on the machine between rounds cancels out instead of skewing the ratio.
 */
export function pairedRatio(values: readonly number[], baseline: readonly number[]): Spread {
  const rounds = Math.min(values.length, baseline.length);
  return spread(Array.from({ length: rounds }, (_, i) => values[i]! / baseline[i]!));
}
