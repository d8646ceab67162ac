import { LockConfigError } from '../errors/lock-config.error.js';

/**
 * What a guarded write is fenced by: the lease it runs under (its `key` then names the lock in errors and
 * events), or the bare `fencingToken` number when the lease is not at hand.
 */
export type FencedBy = number | { readonly fencingToken: number; readonly key?: string };

/** @internal The token and, when known, the lock key; a token that no grant could have issued is rejected. */
export function resolveFencedBy(fencedBy: FencedBy): { fencingToken: number; lockKey: string | undefined } {
  const fencingToken = typeof fencedBy === 'number' ? fencedBy : fencedBy?.fencingToken;
  if (typeof fencingToken !== 'number' || !Number.isSafeInteger(fencingToken) || fencingToken <= 0) {
    throw new LockConfigError('fencedBy', fencedBy, 'a lease or its fencingToken (a positive safe integer)');
  }
  return { fencingToken, lockKey: typeof fencedBy === 'number' ? undefined : fencedBy.key };
}
