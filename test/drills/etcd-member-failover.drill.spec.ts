import type { Etcd3 } from 'etcd3';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { openObserver, queueOf, pollUntil } from '../stores/etcd-test-support';
import { DrillTimeline } from './drill-timeline';
import { expectServedThrough, handOffRounds, heldAndWaitedFor } from './hand-offs';

const APPS = ['a', 'b', 'c'] as const;
const HAND_OFFS_PER_APP = 5;

/**
 * Drill "the etcd member the clients talk to dies": a three-member cluster loses its leader (SIGKILL)
 * while one application holds a lock and another waits for it. etcd3 spreads requests over every
 * endpoint, and every write and every keep-alive ends up at the leader, so that is the member to kill.
 * Proves: the held lease keeps being renewed through the surviving members (no loss), the waiter is
 * served after the release, hand-offs keep working on the two-member majority, and the recorded history
 * never shows two critical sections at once or a fencing token that does not increase.
 */
describe('drill: the etcd leader is killed while a lock is held and waited for', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  const apps = new Map<string, LockApp>();

  beforeAll(async () => {
    cluster = await startEtcdCluster({ size: 3 });
    observer = openObserver(cluster);
    for (const name of APPS) {
      apps.set(name, await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: name, leaseMs: 10_000 }));
    }
  });
  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.close()));
    observer.close();
    await cluster.stop();
  });

  it('keeps the held lease renewed through the other members, serves the waiter, and never has two holders', async () => {
    const timeline = new DrillTimeline();
    for (const [name, app] of apps) timeline.follow(name, app);
    const a = apps.get('a')!;
    const { leave, done } = await heldAndWaitedFor(apps, timeline, 'ledger');
    await pollUntil(async () => (await queueOf(observer, prefix, 'ledger')).length === 2, 'b waits in the queue');

    const leader = await cluster.leader();
    const renewedAfterKill = a.next('renewed', (event) => event.key === 'ledger');
    const kill = timeline.marker(`SIGKILL ${leader.name}, the leader`);
    await leader.kill();
    await renewedAfterKill;
    timeline.marker('the holder renewed through the surviving members');
    leave();
    await done;

    await handOffRounds(apps, timeline, 'ledger', HAND_OFFS_PER_APP);
    expectServedThrough(timeline, 'ledger', kill, 'b', 1 + APPS.length * HAND_OFFS_PER_APP);
  });
});
