import { attemptsWithin, type RetryTuning } from './lock-adapter.js';

/** Redlock's retry settings (the same in redlock v5 and @sesamecare-oss/redlock). */
export interface RedlockRetrySettings {
  readonly retryDelay: number;
  readonly retryJitter: number;
  readonly retryCount: number;
}

/** Documented defaults: 200 ms ± 100 ms. Tuned: 1 ms, no jitter. */
const DELAYS: Record<RetryTuning, { retryDelay: number; retryJitter: number }> = {
  defaults: { retryDelay: 200, retryJitter: 100 },
  tuned: { retryDelay: 1, retryJitter: 0 },
};

/**
 * The retry count is derived from the shared wait budget instead of redlock's default of 10, which would
 * give up after about 2 s and make the contended scenario measure give-ups rather than waiting.
 */
export function redlockRetrySettings(tuning: RetryTuning, waitMs: number): RedlockRetrySettings {
  const delays = DELAYS[tuning];
  return { ...delays, retryCount: attemptsWithin(waitMs, delays.retryDelay) };
}

export function describeRedlockTuning(tuning: RetryTuning): string {
  const { retryDelay, retryJitter } = DELAYS[tuning];
  const origin = tuning === 'defaults' ? 'documented default' : 'tuned';
  return `polls every ${retryDelay} ms ± ${retryJitter} ms (${origin} retryDelay/retryJitter; retryCount from the wait budget)`;
}

export const REDLOCK_TUNINGS = { defaults: describeRedlockTuning('defaults'), tuned: describeRedlockTuning('tuned') };
