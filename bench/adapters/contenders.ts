import type { Contender, RetryTuning } from './lock-adapter.js';
import { fencedContender } from './fenced.adapter.js';
import { lockDecoratorContender } from './lock-decorator.adapter.js';
import { fairLockServiceContender, lockServiceContender, racingLockServiceContender } from './lock-service.adapter.js';
import { murlockContender } from './murlock.adapter.js';
import { nestRedlockContender } from './nest-redlock.adapter.js';
import { rawContender } from './raw.adapter.js';
import { redisSemaphoreContender } from './redis-semaphore.adapter.js';
import { redisStoreContender } from './redis-store.adapter.js';
import { redlockContender } from './redlock.adapter.js';
import { withLockContender } from './with-lock.adapter.js';

/** Everyone, in report order: the floors (unfenced, fenced), this library's protocol alone, its three paths, then the alternatives. */
export const CONTENDERS: readonly Contender[] = [
  rawContender,
  fencedContender,
  redisStoreContender,
  lockServiceContender,
  fairLockServiceContender,
  racingLockServiceContender,
  withLockContender,
  lockDecoratorContender,
  redisSemaphoreContender,
  redlockContender,
  nestRedlockContender,
  murlockContender,
];

/** One contender in one retry mode: the unit every scenario measures. */
export interface Entrant {
  /** e.g. `redis-semaphore` or `redis-semaphore:tuned`. */
  readonly id: string;
  readonly contender: Contender;
  readonly tuning: RetryTuning;
  /** How it waits for a taken key, in words. */
  readonly waiting: string;
}

function entrant(contender: Contender, tuning: RetryTuning): Entrant {
  return {
    id: tuning === 'tuned' && contender.tunings.defaults ? `${contender.id}:tuned` : contender.id,
    contender,
    tuning,
    waiting: contender.tunings[tuning]!,
  };
}

/**
 * Entrants for scenarios where the retry delay matters (contention): every mode of every contender.
 * Otherwise one per contender, its documented defaults where it has them: an uncontended acquire never waits.
 */
export function entrantsFor(contenders: readonly Contender[], everyTuning: boolean): Entrant[] {
  return contenders.flatMap((contender) => {
    const tunings = (Object.keys(contender.tunings) as RetryTuning[]).sort();
    return (everyTuning ? tunings : tunings.slice(0, 1)).map((tuning) => entrant(contender, tuning));
  });
}
