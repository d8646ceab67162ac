import { join } from 'node:path';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { exitOf, forkWorker, nextMessage } from '../support/child-process';
import { createLockApp, type LockApp } from '../support/lock-app';
import { RedisFencedResource } from '../support/redis-fenced-resource';
import { redisUrl, testPrefix } from '../support/test-prefix';

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

  it('hands the key on with a higher token, the paused holder learns by its own deadline, and its late write is refused', async () => {
    const worker = forkWorker(join(__dirname, '../lease/workers/paused-holder.worker.ts'), [prefix, 'job', String(LEASE_MS), `${prefix}resource`], {
      LOCK_TEST_STORE: 'zookeeper',
      ZOOKEEPER_CONNECT: ensemble.connect,
    });
    try {
      const { fencingToken: old } = await nextMessage<{ held: boolean; fencingToken: number }>(worker, (m) => m.held);
      const verdict = nextMessage<{ lost: string; writeAccepted: boolean }>(worker, (m) => 'lost' in m);
      worker.kill('SIGSTOP');
      const pausedAt = Date.now();

      const lease = await app.locks.acquire('job', { waitMs: 30 * LEASE_MS });
      const handedOnMs = Date.now() - pausedAt;
      expect(lease.fencingToken).toBeGreaterThan(old);
      expect(await resource.write('write of the new holder', lease.fencingToken)).toBe(true);

      worker.kill('SIGCONT');
      const resumedAt = Date.now();
      expect(await verdict).toEqual({ lost: 'expired', writeAccepted: false });
      expect(await resource.read()).toEqual({ value: 'write of the new holder', token: lease.fencingToken });
      expect(await exitOf(worker)).toBe(0);
      console.log(`zookeeper paused-holder drill: session ${LEASE_MS} ms; next holder in ${handedOnMs} ms after the pause; the paused holder knew ${Date.now() - resumedAt} ms after it resumed`);
      await lease.release();
    } finally {
      worker.kill('SIGCONT');
      worker.kill('SIGKILL');
    }
  });
});
