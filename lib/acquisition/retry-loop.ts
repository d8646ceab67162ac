import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';
import type { AcquireTally } from '../events/acquire-tally.js';
import type { AcquireResult, LockGranted } from '../stores/lock-store.interface.js';
import { retryDelayMs } from '../support/retry-delay.js';
import { Wake } from '../support/wake.js';
import { ReleaseSubscription } from './release-subscription.js';

export interface WaitPlan {
  readonly waitMs: number;
  readonly retryMinDelayMs: number;
  readonly retryMaxDelayMs: number;
  readonly signal?: AbortSignal;
  /** Counts attempts and wake-ups, for the acquisition's events. */
  readonly tally: AcquireTally;
  /** A fresh ownership token. */
  newToken(): string;
  /** One acquisition attempt against the store. */
  attempt(token: string): Promise<AcquireResult>;
  /** Subscribes to release notifications of the key; may fail, then waiting falls back to polling. */
  subscribe(listener: () => void): Promise<() => void>;
  /** Told once, when the first attempt finds the key taken. */
  onContention(holderTtlMs: number): void;
  /**
   * The first attempt, when the caller made it already (the uncontended fast path tries once before it
   * sets up any waiting): its token, its outcome (a denial, or the store error it failed with) and when it
   * was sent. The wait goes on from there. Its contention, if any, is already told.
   */
  readonly first?: FirstAttempt;
}

export interface FirstAttempt {
  readonly token: string;
  readonly result: AcquireResult | undefined;
  readonly failure: unknown;
  readonly sentAt: number;
}

export interface WaitOutcome {
  readonly granted: LockGranted | undefined;
  /** The ownership token of the grant (or of the last attempt). */
  readonly token: string;
  /** When the last attempt was sent: a grant's TTL started no earlier. */
  readonly lastSentAt: number;
  /** The TTL the grant started with, when shorter than the lease asked for (a queue's hand-off). */
  readonly grantedTtlMs?: number;
}

/**
 * Acquires within `waitMs`. Between attempts a waiter sleeps until the first of: a release notification for
 * the key, the holder's remaining TTL, the deadline, or a fallback delay in case a notification was missed:
 * about `retryMaxDelayMs` while subscribed (a rare safety net), exponential with full jitter from
 * `retryMinDelayMs` while its release subscription is refused. It never spins and never sleeps past the deadline.
 *
 * A store error (`LockStoreUnavailableError`: a failover, a restart, a cut connection) is retried with the
 * exponential backoff while the deadline allows; when it does not, the last store error is what the caller gets,
 * so fail-closed means the protected code does not run, not that a wait with time left gives up. An
 * attempt that failed may still have run (its clean-up is the store's), so the next one uses a new token:
 * a late reply or clean-up of the old attempt can never touch the new grant.
 */
export async function acquireWithin(plan: WaitPlan): Promise<WaitOutcome> {
  const deadline = Date.now() + plan.waitMs;
  const { first } = plan;
  let token = first ? first.token : plan.newToken();
  let lastSentAt = first ? first.sentAt : Date.now();
  let result: AcquireResult | undefined = first?.result;
  let failure: unknown = first?.failure;
  let contended = false;
  // A first attempt made by the caller that found the key taken has been told as contention already.
  const contentionTold = first?.result !== undefined;
  const wake = new Wake();
  const channel = new ReleaseSubscription(plan.subscribe, wake);
  const attempt = async (): Promise<void> => {
    if (failure !== undefined) token = plan.newToken();
    lastSentAt = Date.now();
    plan.tally.attempts++;
    try {
      result = await plan.attempt(token);
      failure = undefined;
    } catch (error) {
      if (!(error instanceof LockStoreUnavailableError)) throw error;
      result = undefined;
      failure = error;
    }
  };
  const outcome = (): WaitOutcome => {
    if (failure !== undefined) throw failure;
    return { granted: result?.acquired ? result : undefined, token, lastSentAt };
  };

  if (!first) await attempt();
  try {
    for (let retry = 1; ; retry++) {
      if (result?.acquired) return outcome();
      if (result && !contended) {
        contended = true;
        if (!contentionTold) plan.onContention(result.ttlMs);
        // Subscribed once the key is known to be taken, without waiting for it: attempts go on meanwhile.
        if (plan.waitMs > 0) channel.open();
      } else if (contended) {
        // A refused subscription (the subscriber connection coming up after a start or a failover) is asked
        // for again at each wake-up, so the wait polls only until the channel is live, not to its end.
        channel.reopenIfRefused();
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) return outcome();
      // Subscribed (or the subscription's answer still to come) and the store answering: the release
      // notification wakes the waiter, and the fallback is a safety net for a missed one, once per
      // retryMaxDelayMs or so, never a steady poll. With the subscription refused, or while store errors are
      // retried, exponential from the minimum.
      const listening = channel.listening && failure === undefined;
      const backoff = listening ? safetyNetDelayMs(plan.retryMaxDelayMs) : retryDelayMs(retry, plan.retryMinDelayMs, plan.retryMaxDelayMs);
      const holderLeft = result && !result.acquired && result.ttlMs >= 0 ? result.ttlMs + 1 : Infinity;
      const sleepMs = Math.min(remaining, backoff, holderLeft);
      const notified = await wake.wait(Date.now() + sleepMs, plan.signal);
      // The wake-up the subscription's answer gave (confirmed: the attempt right after catches a release that
      // came before the channel was live; refused: the waiter polls from now on). Neither a release nor a
      // fallback, so it is not counted as one.
      const answer = notified && channel.takeAnswer();
      if (!plan.signal?.aborted && !answer) {
        plan.tally.wokenBy(notified ? 'notification' : sleepMs === holderLeft ? 'expiry' : sleepMs === remaining ? 'deadline' : 'backoff');
      }
      if (listening) retry = 0;
      plan.signal?.throwIfAborted();
      await attempt();
    }
  } finally {
    channel.close();
  }
}

/**
 * The fallback sleep of a subscribed waiter: between half and all of `maxMs`, so that waiters that missed
 * one notification together do not retry together, and none retries at once.
 */
function safetyNetDelayMs(maxMs: number): number {
  return maxMs * (0.5 + Math.random() / 2);
}
