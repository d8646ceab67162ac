import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { RedlockMasters } from '../stores/redlock-test-support';
import { waitFor } from '../../scripts/servers/server-probes';
import { DrillTimeline } from './drill-timeline';
import { expectServedThrough, handOffRounds, heldAndWaitedFor } from './hand-offs';

const APPS = ['a', 'b', 'c'] as const;
const HAND_OFFS_PER_APP = 5;

/**
 * Drill "one Redlock master dies" (SIGKILL of one of three, while a lock is held and waited for): what
 * Redlock exists for. Proves: the held lease keeps being renewed by the two survivors (a majority), the
 * waiter is woken by the release on them and served, hand-offs go on with 2 of 3, and the history never
 * shows two holders at once nor a fencing token that does not rise.
 */
describe('drill: one of three Redlock masters is killed while a lock is held and waited for', () => {
  const prefix = testPrefix(__filename);
  let masters: RedlockMasters;
  const apps = new Map<string, LockApp>();

  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
    for (const name of APPS) {
      apps.set(name, await createLockApp({ store: 'redlock', redlock: { masters: masters.urls }, keyPrefix: prefix, holder: name, leaseMs: 3_000 }));
    }
  });
  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.close()));
    await masters.stop();
  });

  it('renews the held lease on the survivors, serves the waiter, and goes on handing the lock over on 2 of 3', async () => {
    const timeline = new DrillTimeline();
    for (const [name, app] of apps) timeline.follow(name, app);
    const a = apps.get('a')!;
    const { leave, done } = await heldAndWaitedFor(apps, timeline, 'ledger');
    // The waiter was turned away and subscribed: it marked the holder's value as waited for ('w').
    await waitFor('b to wait for the release', async () => (await masters.ask(0, (redis) => redis.get(`${prefix}ledger`)))?.startsWith('w') === true);

    const renewedAfterKill = a.next('renewed', (event) => event.key === 'ledger');
    const kill = timeline.marker('SIGKILL master 0');
    await masters.kill(0);
    await renewedAfterKill;
    timeline.marker('the holder renewed on masters 1 and 2');
    leave();
    await done;

    await handOffRounds(apps, timeline, 'ledger', HAND_OFFS_PER_APP);
    expectServedThrough(timeline, 'ledger', kill, 'b', 1 + APPS.length * HAND_OFFS_PER_APP);
  });
});
