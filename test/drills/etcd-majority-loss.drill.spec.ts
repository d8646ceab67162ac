import { LeaseLostError, LockStoreUnavailableError } from '../../lib/index';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { DrillTimeline } from './drill-timeline';
import { holdUntilLost } from './held-until-lost';

const LEASE_MS = 4_000;

/**
 * Drill "the etcd cluster loses its majority" (two of three members killed while a lock is held): the
 * case a consensus store exists for, where "unavailable" must win over "two holders". Proves: acquiring
 * fails closed with `LockStoreUnavailableError` naming the endpoints, for a single attempt and for a wait;
 * the holder is told its lease is lost (reason `expired`, its signal aborted, its call ends in
 * `LeaseLostError`) by its own deadline, while etcd could not have expired anything (no quorum, no lease
 * revocation); and once the majority is back the next holder gets a greater fencing token, strictly after
 * the old holder left. The history never shows two holders.
 */
describe('drill: the etcd cluster loses its majority while a lock is held', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let holder: LockApp;
  let other: LockApp;

  beforeAll(async () => {
    cluster = await startEtcdCluster({ size: 3 });
    holder = await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: 'holder', leaseMs: LEASE_MS });
    other = await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: 'other', leaseMs: LEASE_MS });
  });
  afterAll(async () => {
    await holder.close();
    await other.close();
    await cluster.stop();
  });

  it('fails closed, ends the held lease as lost by its own deadline, and hands the lock on only after the majority is back', async () => {
    const timeline = new DrillTimeline();
    timeline.follow('holder', holder);
    timeline.follow('other', other);

    const { lease: oldLease, holding, lost } = await holdUntilLost(holder, timeline, 'holder', 'ledger');

    const [first, second] = cluster.members.filter((member) => member.name !== 'm1');
    const outage = timeline.marker(`SIGKILL ${first!.name} and ${second!.name}: no majority`);
    await Promise.all([first!.kill(), second!.kill()]);

    const once = await other.locks.tryAcquire('elsewhere').catch((error: unknown) => error);
    expect(once).toBeInstanceOf(LockStoreUnavailableError);
    expect((once as Error).message).toContain(cluster.endpoints[0]!.replace('http://', ''));
    const waited = await other.locks.acquire('ledger', { waitMs: 1_000 }).catch((error: unknown) => error);
    expect(waited).toBeInstanceOf(LockStoreUnavailableError);

    expect(await lost).toMatchObject({ key: 'ledger', reason: 'expired' });
    expect(oldLease.signal.aborted).toBe(true);
    expect(await holding).toBeInstanceOf(LeaseLostError);

    const restored = timeline.marker('majority restored');
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
