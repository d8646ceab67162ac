import { LeaseLostError, LockStoreUnavailableError } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { RedlockMasters } from '../stores/redlock-test-support';
import { DrillTimeline } from './drill-timeline';
import { holdUntilLost } from './held-until-lost';

const LEASE_MS = 3_000;

/**
 * Drill "two of three Redlock masters die" while a lock is held: no majority, so nothing may be granted.
 * Proves: acquiring fails closed with `LockStoreUnavailableError` naming the dead masters, for a single
 * attempt and for a wait, and the surviving master keeps no key of those attempts (each gave back what it
 * got); the holder, whose renewals now have one vote of three, is told its lease is lost (`expired`, its
 * call ends in `LeaseLostError`) by its own deadline; once the masters are back (empty) the next holder
 * gets a greater fencing token, strictly after the old holder left.
 */
describe('drill: two of three Redlock masters are killed while a lock is held', () => {
  const prefix = testPrefix(__filename);
  let masters: RedlockMasters;
  let holder: LockApp;
  let other: LockApp;

  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
    const options = { store: 'redlock' as const, redlock: { masters: masters.urls }, keyPrefix: prefix, leaseMs: LEASE_MS };
    holder = await createLockApp({ ...options, holder: 'holder' });
    other = await createLockApp({ ...options, holder: 'other' });
  });
  afterAll(async () => {
    await holder.close();
    await other.close();
    await masters.stop();
  });

  it('fails closed, gives back what a failed attempt got, ends the held lease by its own deadline, and hands on with a higher token once the masters are back', async () => {
    const timeline = new DrillTimeline();
    timeline.follow('holder', holder);
    timeline.follow('other', other);

    const { lease: oldLease, holding, lost } = await holdUntilLost(holder, timeline, 'holder', 'ledger');

    const outage = timeline.marker('SIGKILL masters 1 and 2: no majority');
    await Promise.all([masters.kill(1), masters.kill(2)]);

    const once = await other.locks.tryAcquire('elsewhere').catch((error: unknown) => error);
    expect(once).toBeInstanceOf(LockStoreUnavailableError);
    expect((once as Error).message).toContain(masters.urls[1]!.replace('redis://', ''));
    // The surviving master granted 'elsewhere' to that attempt; it was given back.
    expect(await masters.ask(0, (redis) => redis.exists(`${prefix}elsewhere`))).toBe(0);
    const waited = await other.locks.acquire('ledger', { waitMs: 1_000 }).catch((error: unknown) => error);
    expect(waited).toBeInstanceOf(LockStoreUnavailableError);

    expect(await lost).toMatchObject({ key: 'ledger', reason: 'expired' });
    expect(oldLease.signal.aborted).toBe(true);
    expect(await holding).toBeInstanceOf(LeaseLostError);

    const restored = timeline.marker('masters 1 and 2 restarted (empty)');
    await Promise.all([masters.restartEmpty(1), masters.restartEmpty(2)]);
    const next = await other.locks.acquire('ledger', { waitMs: 30_000 });
    await timeline.section('other', next, async () => undefined);
    await next.release();

    const history = timeline.toString();
    expect({ violations: timeline.violations('ledger'), history }).toEqual({ violations: [], history });
    expect(next.fencingToken).toBeGreaterThan(oldLease.fencingToken);
    const lostEntry = timeline.entries.find((entry) => entry.kind === 'lost' && entry.key === 'ledger')!;
    expect(lostEntry.seq).toBeGreaterThan(outage.seq);
    expect(lostEntry.seq).toBeLessThan(restored.seq);
    expect(timeline.entries.filter((entry) => entry.kind === 'acquired' && entry.key === 'ledger')).toHaveLength(2);
  });
});
