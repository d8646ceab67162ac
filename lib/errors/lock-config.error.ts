import { LockError } from './lock.error.js';

/** A module option or decorator option is invalid; raised while the application starts. */
export class LockConfigError extends LockError {
  readonly code = 'LOCK_CONFIG_INVALID';

  constructor(
    readonly option: string,
    value: unknown,
    expected: string,
  ) {
    super(`Invalid lock option "${option}" = ${describeValue(value)}: expected ${expected}.`);
  }
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || typeof value !== 'object') return String(value);
  return Object.prototype.toString.call(value);
}
