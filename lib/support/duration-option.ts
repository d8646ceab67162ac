import { LockConfigError } from '../errors/lock-config.error.js';

/** setTimeout's ceiling; longer durations would fire at once. */
const MAX_DURATION_MS = 2_147_483_647;

/** Checks one duration; also used for per-call overrides so they fail the same way. */
export function durationOption(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > MAX_DURATION_MS) {
    throw new LockConfigError(name, value, `a whole number of milliseconds from ${min} to ${MAX_DURATION_MS}`);
  }
  return value;
}
