/**
 * The delay before retry number `failures + 1` of a call that failed: exponential from `minMs`, capped at
 * `maxMs`, with full jitter (a random share of it), so instances that failed together do not retry together.
 */
export function retryDelayMs(failures: number, minMs = 25, maxMs = 1_000): number {
  return Math.random() * Math.min(maxMs, minMs * 2 ** failures);
}
