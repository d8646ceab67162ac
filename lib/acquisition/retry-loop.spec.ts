import { AcquireTally } from '../events/acquire-tally.js';
import type { AcquireResult } from '../stores/lock-store.interface.js';
import { acquireWithin, type WaitPlan } from './retry-loop.js';

/** Resolves once `condition` holds, looking every 5 ms; rejects after `withinMs` with what it waited for. */
async function until(what: string, condition: () => boolean, withinMs = 10_000): Promise<void> {
  const giveUpAt = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`still waiting for ${what} after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * The wait's scheduling between store calls, with a key whose holder the test plays and a subscription whose
 * answer the test gives when it chooses: what a slow subscriber connection (still connecting on a loaded box)
 * or a refusing one looks like to a waiter. The lock semantics behind the attempts are the stores' specs'.
 */
function scenario(retry: { minMs: number; maxMs: number }) {
  let held = true;
  let listener: (() => void) | undefined;
  const answers: Array<{ confirm(): void; refuse(): void }> = [];
  const tally = new AcquireTally('k', undefined);
  const plan: WaitPlan = {
    waitMs: 60_000,
    retryMinDelayMs: retry.minMs,
    retryMaxDelayMs: retry.maxMs,
    tally,
    newToken: () => 'token',
    attempt: async (): Promise<AcquireResult> => (held ? { acquired: false, ttlMs: -1 } : { acquired: true, fencingToken: 2 }),
    subscribe: (onRelease) =>
      new Promise((resolve, reject) => {
        answers.push({
          confirm: () => {
            listener = onRelease;
            resolve(() => (listener = undefined));
          },
          refuse: () => reject(new Error('NOPERM')),
        });
      }),
    onContention: () => undefined,
  };
  return {
    tally,
    answers,
    waiting: acquireWithin(plan),
    release(): void {
      held = false;
      listener?.();
    },
  };
}

describe('acquireWithin', () => {
  it('does not poll while its subscription is on its way: the confirmation wakes it, then the release', async () => {
    const run = scenario({ minMs: 10, maxMs: 60_000 });
    await until('the subscription asked for', () => run.answers.length === 1);
    // The backoff from 10 ms (full jitter) would have woken it several times in this while.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(run.tally.attempts).toBe(1);

    run.answers[0]!.confirm();
    await until('the attempt after the confirmation', () => run.tally.attempts === 2);
    run.release();
    const outcome = await run.waiting;

    expect(outcome.granted?.fencingToken).toBe(2);
    const { attempts, wakeUps } = run.tally.report();
    expect({ attempts, wakeUps }).toEqual({ attempts: 3, wakeUps: { notification: 1, backoff: 0, expiry: 0, deadline: 0 } });
  });

  it('counts a release that comes with its subscription\'s confirmation as a notification, not as the answer', async () => {
    // The two arrive back to back on the subscriber connection (the key released just as the channel became
    // live): one wake-up serves both, and the grant it leads to is the release's.
    const run = scenario({ minMs: 10, maxMs: 60_000 });
    await until('the subscription asked for', () => run.answers.length === 1);
    run.answers[0]!.confirm();
    run.release();
    const outcome = await run.waiting;

    expect(outcome.granted?.fencingToken).toBe(2);
    const { attempts, wakeUps } = run.tally.report();
    expect({ attempts, wakeUps }).toEqual({ attempts: 2, wakeUps: { notification: 1, backoff: 0, expiry: 0, deadline: 0 } });
  });

  it('is woken by a refusal of its subscription, polls, and asks again until it is live', async () => {
    // A safety-net sleep of 30-60 s: only the refusal's wake-up can end it within the test.
    const run = scenario({ minMs: 10, maxMs: 60_000 });
    await until('the subscription asked for', () => run.answers.length === 1);
    run.answers[0]!.refuse();
    await until('the subscription asked for again', () => run.answers.length === 2);
    const attemptsWhenAskedAgain = run.tally.attempts;
    expect(attemptsWhenAskedAgain).toBeGreaterThanOrEqual(2);

    // A refused re-ask does not wake the waiter at once (that would be a loop of SUBSCRIBE and attempts): it
    // polls by the backoff and asks at its next wake-up.
    run.answers[1]!.refuse();
    await until('the third ask, at a backoff wake-up', () => run.answers.length === 3);
    expect(run.tally.report().wakeUps.backoff).toBeGreaterThanOrEqual(1);

    const attemptsWhenConfirmed = run.tally.attempts;
    run.answers[2]!.confirm();
    await until('the attempt after the confirmation', () => run.tally.attempts === attemptsWhenConfirmed + 1);
    run.release();
    expect((await run.waiting).granted).toBeDefined();
    expect(run.tally.report().wakeUps.notification).toBe(1);
  });
});
