import { MurLock, MurLockModule } from 'murlock';
import { defineLockedTarget } from './decorated-target.js';
import type { Contender, LockAdapter } from './lock-adapter.js';
import { openNestContext } from './nest-context.js';
import { scopedCalls } from './scope-handle.js';

/**
 * murlock has no built-in defaults; its README configures `wait: 1000` with `maxAttempts: 3`, and retries
 * after wait × attempt (linear backoff). Tuned: a fixed 1 ms wait per decorator.
 */
const README_WAIT_MS = 1000;
const TUNED_WAIT_MS = 1;

/**
 * The most attempts whose linear backoff fits the shared wait budget. murlock also sleeps after its last
 * failed attempt before giving up, so n attempts sleep wait × (1 + 2 + … + n) in total.
 */
function linearAttemptsWithin(waitMs: number, stepMs: number): number {
  let attempts = 1;
  while ((stepMs * (attempts + 1) * (attempts + 2)) / 2 <= waitMs) attempts++;
  return attempts;
}

/** murlock: a `@MurLock(releaseTime, 'key')` method decorator on node-redis; EVAL (script text) per attempt. */
export const murlockContender: Contender = {
  id: 'murlock',
  label: 'murlock @MurLock method',
  role: 'alternative',
  packageName: 'murlock',
  tunings: {
    defaults: `retries after ${README_WAIT_MS} ms × attempt (README's wait; maxAttempts: the most that fit the wait budget)`,
    tuned: `retries every ${TUNED_WAIT_MS} ms (decorator wait: ${TUNED_WAIT_MS})`,
  },
  renewsLeases: false,
  async open(options): Promise<LockAdapter> {
    const tuned = options.tuning === 'tuned';
    // The key is `<class>:<method>:<key argument>`; the prefix rides in the argument.
    const decorator = tuned ? MurLock(options.leaseMs, TUNED_WAIT_MS, 'key') : MurLock(options.leaseMs, 'key');
    const Target = defineLockedTarget([decorator]);
    const app = await openNestContext(
      [
        MurLockModule.forRoot({
          redisOptions: { url: options.redisUrl },
          wait: README_WAIT_MS,
          maxAttempts: tuned
            ? Math.ceil(options.waitMs / TUNED_WAIT_MS) + 1
            : linearAttemptsWithin(options.waitMs, README_WAIT_MS),
          // 'none' is not below 'error' in murlock's level check and would log every attempt.
          logLevel: 'error',
        }),
      ],
      [Target],
    );
    const target = app.get(Target);
    return {
      ...scopedCalls((key, body) => target.locked(options.keyPrefix + key, body)),
      close: () => app.close(),
    };
  },
};
