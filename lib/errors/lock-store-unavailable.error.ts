import { LockError } from './lock.error.js';

/** The lock store could not be reached or answered with an error; the protected code did not run. */
export class LockStoreUnavailableError extends LockError {
  readonly code = 'LOCK_STORE_UNAVAILABLE';

  constructor(operation: string, key: string, options?: { cause?: unknown }) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(`Lock store failed during ${operation} of "${key}"${detail}`, options);
  }
}
