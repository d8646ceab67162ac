import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { RedisFencedResource } from '../support/redis-fenced-resource';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { runPausedHolderDrill } from './paused-holder';

const LEASE_MS = 2_000;

/**
 * Drill "holder paused past its lease" (SIGSTOP) on the ZooKeeper store. Proves: the session is the
 * lease, so the ensemble expires a frozen holder's session and the next contender gets the lock with a
 * higher fencing token (czxid); when the frozen holder runs again it learns of the loss by its own
 * deadline ('expired', not from the server), and the fenced resource refuses the write it makes under
 * its old token.
 */
describe('drill: a ZooKeeper lock holder is paused (SIGSTOP) past its session', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let app: LockApp;
  let resource: RedisFencedResource;

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    app = await createLockApp({ store: 'zookeeper', zookeeper: ensemble.connect, keyPrefix: prefix, leaseMs: LEASE_MS });
    resource = new RedisFencedResource(redisUrl(), `${prefix}resource`);
  });
  afterAll(async () => {
    resource?.close();
    await app?.close();
    await ensemble?.stop();
  });

  it('hands the key on with a higher token, the paused holder learns by its own deadline, and its late write is refused', () =>
    runPausedHolderDrill({
      store: 'zookeeper',
      app,
      workerEnv: { LOCK_TEST_STORE: 'zookeeper', ZOOKEEPER_CONNECT: ensemble.connect },
      prefix,
      leaseMs: LEASE_MS,
      resource,
    }));
});
