import { LeaseLostError } from '../errors/lease-lost.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import type { LockError } from '../errors/lock.error.js';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';
import { StaleFencingTokenError } from '../errors/stale-fencing-token.error.js';

/** What a client receives for a lock error the built-in filter maps. Never the key nor the token. */
export interface LockErrorBody {
  readonly statusCode: 400 | 409 | 503;
  readonly error: 'Bad Request' | 'Conflict' | 'Service Unavailable';
  /** The error's stable `code`, e.g. `LOCK_NOT_ACQUIRED`. */
  readonly code: string;
  readonly message: string;
}

/** @deprecated The 409 body; see {@link LockErrorBody}. */
export type LockConflictBody = LockErrorBody & { readonly statusCode: 409 };

export interface LockErrorResponse {
  readonly body: LockErrorBody;
  /** Seconds, for `Retry-After`. */
  readonly retryAfterSeconds?: number;
}

const conflict = (code: string, message: string): LockErrorResponse => ({ body: { statusCode: 409, error: 'Conflict', code, message } });
const unavailable = (code: string, message: string): LockErrorResponse => ({
  body: { statusCode: 503, error: 'Service Unavailable', code, message },
  retryAfterSeconds: 1,
});

/**
 * The HTTP answer for each lock error a client can do something about. Errors that are programming or
 * configuration mistakes (`LockConfigError`, `LockReentryError`, `LockUpgradeError`, `LockNotBoundError`) are not mapped: they
 * stay 500s, as any bug does.
 *
 * | error | status | why |
 * | --- | --- | --- |
 * | `LockNotAcquiredError` | 409 | another operation holds the resource; retry later |
 * | `StaleFencingTokenError` (also as the cause of a `LeaseLostError`) | 409 | a newer holder wrote first; nothing was written |
 * | `LeaseLostError`, reason `rejected` | 409 | another holder took the resource over while this request ran |
 * | `LeaseLostError`, reason `expired` or `shutdown` | 503 + `Retry-After` | the lock store or this instance could not keep the lease |
 * | `LockStoreUnavailableError` | 503 + `Retry-After` | the lock store is unreachable; the protected code did not run |
 * | `LockKeyError` | 400 | a request value cannot name a resource (empty, missing, an object) |
 */
export function lockErrorResponse(error: LockError): LockErrorResponse | undefined {
  const stale = error instanceof StaleFencingTokenError ? error : error.cause instanceof StaleFencingTokenError ? error.cause : undefined;
  if (stale) return conflict(stale.code, 'A newer operation on this resource wrote first; this write was refused and not applied.');
  if (error instanceof LockNotAcquiredError) {
    return conflict(error.code, 'The resource is locked by another operation in progress; retry later.');
  }
  if (error instanceof LeaseLostError) {
    return error.reason === 'rejected'
      ? conflict(error.code, 'Another operation took this resource over while the request ran; its outcome is uncertain, check before retrying.')
      : unavailable(error.code, 'The lock on this resource could not be kept while the request ran; its outcome is uncertain, retry later.');
  }
  if (error instanceof LockStoreUnavailableError) return unavailable(error.code, 'The lock service is unavailable; nothing was done, retry later.');
  if (error instanceof LockKeyError) {
    return { body: { statusCode: 400, error: 'Bad Request', code: error.code, message: 'A value identifying the resource is missing or invalid.' } };
  }
  return undefined;
}
