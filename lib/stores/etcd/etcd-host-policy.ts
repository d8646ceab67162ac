import type { IOptions } from 'etcd3';
import type * as CockatielModule from 'cockatiel';
import { loadOptionalPeer } from '../../support/optional-peer.js';

export type CockatielPackage = typeof CockatielModule;

/**
 * How long etcd3 skips a member after three failures in a row before it tries it again. etcd3's own
 * default is five seconds, and during an election every member answers "no leader": all three circuits
 * open, and every call is refused by the client itself ("the circuit breaker is open") for five seconds
 * after the ensemble serves again. The torture run saw a one-second election cost six seconds of
 * refusals, and the clean-up of a wait that ended meanwhile (its waiter key, held by nobody) wait for it.
 * A second matches the store's own retry cap: a member back after an election gets the next retry.
 */
export const MEMBER_RETRY_AFTER_MS = 1_000;
const FAILURES_BEFORE_SKIPPING = 3;

/** Loads `cockatiel`, the fault-handling library etcd3 is built on and configured with (an optional peer). */
export function loadCockatiel(): Promise<CockatielPackage> {
  return loadOptionalPeer('cockatiel', { option: 'store', value: 'etcd', isModule: (cockatiel) => typeof cockatiel.circuitBreaker === 'function' });
}

/** etcd3's per-member policy: its own circuit breaker, re-tried after `MEMBER_RETRY_AFTER_MS`. */
export function memberPolicy(cockatiel: CockatielPackage, isRecoverableError: (error: Error) => boolean): NonNullable<IOptions['faultHandling']>['host'] {
  return () =>
    cockatiel.circuitBreaker(cockatiel.handleWhen(isRecoverableError), {
      halfOpenAfter: MEMBER_RETRY_AFTER_MS,
      breaker: new cockatiel.ConsecutiveBreaker(FAILURES_BEFORE_SKIPPING),
    });
}
