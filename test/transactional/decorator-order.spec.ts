import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { createCounterApp, type CounterApp, type CounterService } from './counter.fixture';

type Increment = 'incrementLockOutside' | 'incrementLockInside';

describe('@DistributedLock with @Transactional on the same method: order does not matter', () => {
  const prefix = testPrefix(__filename);
  let postgres: PostgresServer;
  let apps: CounterApp[];

  beforeAll(async () => {
    postgres = await startPostgresServer();
    apps = [
      await createCounterApp(postgres.url, { redis: redisUrl(), keyPrefix: prefix }),
      await createCounterApp(postgres.url, { redis: redisUrl(), keyPrefix: prefix }),
    ];
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await postgres.stop();
  });

  it.each<[string, Increment]>([
    ['@DistributedLock above @Transactional', 'incrementLockOutside'],
    ['@Transactional above @DistributedLock', 'incrementLockInside'],
  ])('%s: released after COMMIT, and concurrent increments from two apps lose nothing', async (_, method) => {
    const id = method;
    const counters = (app: CounterApp): CounterService => app.counters;
    await counters(apps[0]!).reset(id);

    apps[0]!.timeline.entries.splice(0);
    await counters(apps[0]!)[method](id);
    const { entries } = apps[0]!.timeline;
    expect(entries.indexOf(`released counter:${id}`)).toBeGreaterThan(entries.indexOf('COMMIT'));

    await Promise.all(
      apps.flatMap((app) =>
        Array.from({ length: 3 }, async () => {
          for (let i = 0; i < 8; i++) await counters(app)[method](id);
        }),
      ),
    );
    expect(await counters(apps[0]!).value(id)).toBe(1 + 2 * 3 * 8);
  });
});
