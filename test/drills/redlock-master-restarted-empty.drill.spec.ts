import { LeaseLostError } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { RedlockMasters } from '../stores/redlock-test-support';
import { DrillTimeline } from './drill-timeline';
import { holdUntilLost } from './held-until-lost';

/**
 * Drill "a master restarts empty while a lock is held" (the published critique of Redlock: a master without
 * fsync'ed persistence forgets its grants). The holder is granted on all three masters; master 2 crashes
 * and comes back empty (the published case: a grant a majority made, a master of that majority forgetting
 * it), then master 0 does the same: the holder's key now exists on master 1 alone, and a second client is granted the key on masters 0 and 2, a majority. What this proves,
 * as measured here and written in docs/redlock.md: mutual exclusion is broken (two holders at once, which
 * the drill asserts so that a change in it is seen); the second grant's fencing token is higher, so a fenced
 * write of the old holder is refused (the tokens rest on the clock here, both masters' counters having been
 * lost: see fence.lua.ts); and the old holder learns of the loss at its next renewal, when a majority says
 * the key is not its own, and its call ends in `LeaseLostError` ('rejected').
 */
describe('drill: a Redlock master restarts empty while a lock is held', () => {
  const prefix = testPrefix(__filename);
  let masters: RedlockMasters;
  let holder: LockApp;
  let other: LockApp;

  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
    const options = { store: 'redlock' as const, redlock: { masters: masters.urls }, keyPrefix: prefix, leaseMs: 3_000 };
    holder = await createLockApp({ ...options, holder: 'holder' });
    other = await createLockApp({ ...options, holder: 'other' });
  });
  afterAll(async () => {
    await holder.close();
    await other.close();
    await masters.stop();
  });

  it('grants a second holder, with a higher fencing token, and the first learns of the loss at its next renewal', async () => {
    const timeline = new DrillTimeline();
    timeline.follow('holder', holder);
    timeline.follow('other', other);

    const { lease: oldLease, holding, lost } = await holdUntilLost(holder, timeline, 'holder', 'ledger');

    timeline.marker('masters 2, then 0, crash and come back empty');
    await masters.restartEmpty(2);
    await masters.restartEmpty(0);
    const lockKey = `${prefix}ledger`;
    expect(await Promise.all([0, 1, 2].map((i) => masters.ask(i, (redis) => redis.exists(lockKey))))).toEqual([0, 1, 0]);

    const second = await other.locks.tryAcquire('ledger');
    expect(second).not.toBeNull();
    // Two holders at once: what Redlock without persistence allows.
    expect(oldLease.signal.aborted).toBe(false);
    await timeline.section('other', second!, async () => undefined);
    expect(second!.fencingToken).toBeGreaterThan(oldLease.fencingToken);

    expect(await lost).toMatchObject({ key: 'ledger', reason: 'rejected' });
    expect(await holding).toBeInstanceOf(LeaseLostError);
    await second!.release();
    const overlap = timeline.violations('ledger');
    expect(overlap.length).toBeGreaterThan(0);
  });
});
