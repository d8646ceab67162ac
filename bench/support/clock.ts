import { performance } from 'node:perf_hooks';

/** Monotonic milliseconds with sub-millisecond resolution: wall-clock jumps must not show up as latency. */
export function now(): number {
  return performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
