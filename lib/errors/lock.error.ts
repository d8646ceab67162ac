/**
 * Base class of every error this library throws. `code` is stable across releases, so callers can
 * branch on it even when error classes come from two copies of the package.
 */
export abstract class LockError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
