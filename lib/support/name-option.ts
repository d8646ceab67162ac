import { LockConfigError } from '../errors/lock-config.error.js';

/** Long enough for any key template, short enough to stay a sane metric attribute value. */
const MAX_NAME_LENGTH = 256;

/**
 * Checks a lock's `name` (what events and metrics report instead of the unbounded key); also used for
 * per-call names so they fail the same way. Undefined stays undefined.
 */
export function nameOption(option: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NAME_LENGTH) {
    throw new LockConfigError(option, value, `a non-empty string of at most ${MAX_NAME_LENGTH} characters`);
  }
  return value;
}
