import { LockConfigError } from '../errors/lock-config.error.js';

/** Checks one on/off option (`value`, or `fallback` when unset), so every flag fails the same way. */
export function booleanOption(name: string, value: unknown, fallback: boolean): boolean {
  const chosen = value ?? fallback;
  if (typeof chosen !== 'boolean') throw new LockConfigError(name, chosen, 'true or false');
  return chosen;
}
