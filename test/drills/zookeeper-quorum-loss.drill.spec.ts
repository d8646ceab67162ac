import { LeaseLostError, LockStoreUnavailableError } from '../../lib/index';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { DrillTimeline } from './drill-timeline';
import { holdUntilLost } from './held-until-lost';

const LEASE_MS = 4_000;

/**
 * Drill "the ZooKeeper ensemble loses its quorum" (two of three members killed while a lock is held).
 * Proves: acquiring fails closed with `LockStoreUnavailableError` naming the servers, for a single attempt
 * and for a wait; the holder is told its lease is lost (reason `expired`, its signal aborted, its call ends
 * in `LeaseLostError`) by its own deadline, while no session could expire (no quorum, no leader); and once
 * the quorum is back, the lost holder's node (its session resumed with the ensemble) is deleted by the
 * store and the next holder gets a greater fencing token, strictly after the old holder left. The history
 * never shows two holders.
 */
describe('drill: the ZooKeeper ensemble loses its quorum while a lock is held', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let holder: LockApp;
  let other: LockApp;

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble({ size: 3 });
    const options = { store: 'zookeeper' as const, zookeeper: ensemble.connect, keyPrefix: prefix, leaseMs: LEASE_MS, commandTimeoutMs: 1_000 };
    holder = await createLockApp({ ...options, holder: 'holder' });
    other = await createLockApp({ ...options, holder: 'other' });
  });
  afterAll(async () => {
    await holder?.close();
    await other?.close();
    await ensemble?.stop();
  });

  it('fails closed, ends the held lease as lost by its own deadline, and hands the lock on only after the quorum is back', async () => {
    const timeline = new DrillTimeline();
    timeline.follow('holder', holder);
    timeline.follow('other', other);

    const { lease: oldLease, holding, lost } = await holdUntilLost(holder, timeline, 'holder', 'ledger');

    const [first, second] = ensemble.members.filter((member) => member.id !== 1);
    const outage = timeline.marker(`SIGKILL members ${first!.id} and ${second!.id}: no quorum`);
    await Promise.all([first!.kill(), second!.kill()]);

    const once = await other.locks.tryAcquire('elsewhere').catch((error: unknown) => error);
    expect(once).toBeInstanceOf(LockStoreUnavailableError);
    expect((once as Error).message).toContain(ensemble.members[0]!.address);
    const waited = await other.locks.acquire('ledger', { waitMs: 1_000 }).catch((error: unknown) => error);
    expect(waited).toBeInstanceOf(LockStoreUnavailableError);

    expect(await lost).toMatchObject({ key: 'ledger', reason: 'expired' });
    expect(oldLease.signal.aborted).toBe(true);
    expect(await holding).toBeInstanceOf(LeaseLostError);

    const restored = timeline.marker('quorum restored');
    await Promise.all([first!.start(), second!.start()]);
    const next = await other.locks.acquire('ledger', { waitMs: 30_000 });
    await timeline.section('other', next, async () => undefined);
    await next.release();

    const history = timeline.toString();
    expect({ violations: timeline.violations('ledger'), history }).toEqual({ violations: [], history });
    expect(next.fencingToken).toBeGreaterThan(oldLease.fencingToken);
    const lostEntry = timeline.entries.find((entry) => entry.kind === 'lost' && entry.key === 'ledger')!;
    expect(lostEntry.seq).toBeGreaterThan(outage.seq);
    expect(lostEntry.seq).toBeLessThan(restored.seq);
    const nextGrant = timeline.after(restored).find((entry) => entry.kind === 'acquired' && entry.key === 'ledger')!;
    expect(nextGrant).toMatchObject({ app: 'other', fencingToken: next.fencingToken });
    expect(timeline.entries.filter((entry) => entry.kind === 'acquired' && entry.key === 'ledger')).toHaveLength(2);
  });
});
