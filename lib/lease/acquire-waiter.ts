import type { AcquireResult, LockGranted } from '../stores/lock-store.interface.js';

export interface WaitPlan {
  readonly waitMs: number;
  readonly retryMinDelayMs: number;
  readonly retryMaxDelayMs: number;
  readonly signal?: AbortSignal;
  /** One acquisition attempt against the store. */
  attempt(): Promise<AcquireResult>;
  /** Subscribes to release notifications of the key; may fail, then waiting falls back to polling. */
  subscribe(listener: () => void): Promise<() => void>;
  /** Told once, when the first attempt finds the key taken. */
  onContention(holderTtlMs: number): void;
}

export interface WaitOutcome {
  readonly granted: LockGranted | undefined;
  readonly attempts: number;
  /** When the last attempt was sent: a grant's TTL started no earlier. */
  readonly lastSentAt: number;
}

/**
 * Acquires within `waitMs`. Between attempts a waiter sleeps until the first of: a release notification for
 * the key, the holder's remaining TTL, the deadline, or a fallback delay (exponential with full jitter) in
 * case a notification was missed. It never spins and never sleeps past the deadline.
 */
export async function acquireWithin(plan: WaitPlan): Promise<WaitOutcome> {
  const deadline = Date.now() + plan.waitMs;
  let lastSentAt = Date.now();
  let result = await plan.attempt();
  let attempts = 1;
  if (result.acquired) return outcome(result, attempts, lastSentAt);
  plan.onContention(result.ttlMs);
  if (plan.waitMs === 0) return outcome(result, attempts, lastSentAt);

  const wake = new WakeUp();
  const unsubscribe = await subscribeWithin(plan.subscribe(() => wake.fire()), deadline);
  try {
    for (let retry = 0; ; retry++) {
      // The first retry runs right after subscribing: it catches a release that came before the subscription.
      if (retry > 0) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) return outcome(result, attempts, lastSentAt);
        const backoff = Math.random() * Math.min(plan.retryMaxDelayMs, plan.retryMinDelayMs * 2 ** retry);
        const holderLeft = result.acquired || result.ttlMs < 0 ? Infinity : result.ttlMs + 1;
        await wake.wait(Math.min(remaining, backoff, holderLeft), plan.signal);
      }
      plan.signal?.throwIfAborted();
      lastSentAt = Date.now();
      result = await plan.attempt();
      attempts++;
      if (result.acquired) return outcome(result, attempts, lastSentAt);
    }
  } finally {
    unsubscribe?.();
  }
}

/**
 * A subscription that is not confirmed by the deadline is given up (and undone if it comes later): the
 * waiter then polls, and waiting never outlasts `waitMs` because the subscriber connection is slow.
 */
async function subscribeWithin(
  subscribing: Promise<() => void>,
  deadline: number,
): Promise<(() => void) | undefined> {
  let timer: NodeJS.Timeout | undefined;
  let gaveUp = false;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      gaveUp = true;
      resolve(undefined);
    }, Math.max(0, deadline - Date.now()));
  });
  const subscribed = subscribing.then(
    (unsubscribe) => {
      if (gaveUp) unsubscribe();
      return unsubscribe;
    },
    () => undefined,
  );
  try {
    return await Promise.race([subscribed, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function outcome(result: AcquireResult, attempts: number, lastSentAt: number): WaitOutcome {
  return { granted: result.acquired ? result : undefined, attempts, lastSentAt };
}

/** A sleep that a release notification can cut short; a notification during an attempt is not lost. */
class WakeUp {
  private pending = false;
  private done?: () => void;

  fire(): void {
    this.pending = true;
    this.done?.();
  }

  wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.pending || signal?.aborted) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', finish);
        this.done = undefined;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      signal?.addEventListener('abort', finish);
      this.done = finish;
    });
  }
}
