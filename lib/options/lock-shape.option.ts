import { LockConfigError } from '../errors/lock-config.error.js';
import type { LockShape } from '../stores/lock-shape.js';

/** What asks for a shape: `AcquireOptions` and `@DistributedLock` options alike. */
export interface ShapeOptions {
  readonly mode?: unknown;
  readonly permits?: unknown;
}

/** Whether the options ask for a read/write lock or a semaphore: two property reads, for the hot path. */
export function asksForShape(options: ShapeOptions): boolean {
  return options.mode !== undefined || options.permits !== undefined;
}

/**
 * The shape the options ask for, or undefined for a plain lock; `LockConfigError` naming the option (with
 * `where`, e.g. the decorated method) for a mode other than 'read' / 'write', permits that are not a
 * positive integer, or both at once.
 */
export function lockShapeOption(options: ShapeOptions, where = ''): LockShape | undefined {
  const { mode, permits } = options;
  const of = where === '' ? '' : ` of ${where}`;
  if (mode !== undefined && permits !== undefined) {
    throw new LockConfigError(`mode${of}`, mode, 'either mode (a read/write lock) or permits (a semaphore), not both');
  }
  if (mode !== undefined) {
    if (mode !== 'read' && mode !== 'write') throw new LockConfigError(`mode${of}`, mode, "'read' or 'write'");
    return mode === 'read' ? READ : WRITE;
  }
  if (permits === undefined) return undefined;
  if (typeof permits !== 'number' || !Number.isSafeInteger(permits) || permits < 1) {
    throw new LockConfigError(`permits${of}`, permits, 'a whole number of permits, at least 1');
  }
  return { permits };
}

const READ: LockShape = Object.freeze({ mode: 'read' });
const WRITE: LockShape = Object.freeze({ mode: 'write' });
