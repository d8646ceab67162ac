import { createLockApp, type LockApp } from '../support/lock-app';
import { RedisFencedResource } from '../support/redis-fenced-resource';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { RedlockMasters } from '../stores/redlock-test-support';
import { runPausedHolderDrill } from './paused-holder';

const LEASE_MS = 2_000;

/**
 * Drill "holder paused past its lease" (SIGSTOP) on the Redlock store: the critique's first case, where
 * Redlock's exclusion cannot help (the keys expire on every master while the holder is frozen). Proves:
 * the next contender gets the lock with a higher quorum fencing token; when the frozen holder runs again
 * it learns of the loss by its own deadline ('expired'), and the fenced resource refuses the write it
 * makes under its old token.
 */
describe('drill: a Redlock holder is paused (SIGSTOP) past its lease', () => {
  const prefix = testPrefix(__filename);
  let masters: RedlockMasters;
  let app: LockApp;
  let resource: RedisFencedResource;

  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
    app = await createLockApp({ store: 'redlock', redlock: { masters: masters.urls }, keyPrefix: prefix, leaseMs: LEASE_MS });
    resource = new RedisFencedResource(redisUrl(), `${prefix}resource`);
  });
  afterAll(async () => {
    resource?.close();
    await app?.close();
    await masters?.stop();
  });

  it('hands the key on with a higher token, the paused holder learns by its own deadline, and its late write is refused', () =>
    runPausedHolderDrill({
      store: 'redlock',
      app,
      workerEnv: { LOCK_TEST_STORE: 'redlock', REDLOCK_MASTERS: masters.urls.join(',') },
      prefix,
      leaseMs: LEASE_MS,
      resource,
    }));
});
