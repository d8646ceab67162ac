import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { openObserver, queueOf, pollUntil, type ZookeeperObserver } from '../stores/zookeeper-test-support';
import { DrillTimeline } from './drill-timeline';
import { expectServedThrough, handOffRounds, heldAndWaitedFor } from './hand-offs';

const APPS = ['a', 'b', 'c'] as const;
const HAND_OFFS_PER_APP = 5;

/**
 * Drill "the ZooKeeper leader dies": a three-member ensemble loses its leader (SIGKILL) while one
 * application holds a lock and another waits for it. Every write goes through the leader, and the leader
 * tracks every session, so that is the member to kill. Proves: the sessions survive the election (the new
 * leader takes them over, clients on the dead member reconnect to another one), the held lease keeps
 * being renewed (no loss), the waiter is served after the release, hand-offs go on on the two-member
 * quorum, and the recorded history never shows two critical sections at once or a token that does not
 * increase.
 */
describe('drill: the ZooKeeper leader is killed while a lock is held and waited for', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let observer: ZookeeperObserver;
  const apps = new Map<string, LockApp>();

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble({ size: 3 });
    observer = await openObserver(ensemble);
    for (const name of APPS) {
      apps.set(name, await createLockApp({ store: 'zookeeper', zookeeper: ensemble.connect, keyPrefix: prefix, holder: name, leaseMs: 10_000 }));
    }
  });
  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.close()));
    await observer?.close();
    await ensemble?.stop();
  });

  it('keeps the held lease renewed through the election, serves the waiter, and never has two holders', async () => {
    const timeline = new DrillTimeline();
    for (const [name, app] of apps) timeline.follow(name, app);
    const a = apps.get('a')!;
    const { leave, done } = await heldAndWaitedFor(apps, timeline, 'ledger');
    await pollUntil(async () => (await queueOf(observer, prefix, 'ledger')).length === 2, 'b waits in the queue');

    const leader = await ensemble.leader();
    const renewedAfterKill = a.next('renewed', (event) => event.key === 'ledger');
    const kill = timeline.marker(`SIGKILL member ${leader.id}, the leader`);
    await leader.kill();
    await renewedAfterKill;
    timeline.marker('the holder renewed after the election');
    leave();
    await done;

    await handOffRounds(apps, timeline, 'ledger', HAND_OFFS_PER_APP);
    expectServedThrough(timeline, 'ledger', kill, 'b', 1 + APPS.length * HAND_OFFS_PER_APP);
  });
});
