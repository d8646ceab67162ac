import { join } from 'node:path';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { exitOf, forkWorker, nextMessage } from '../support/child-process';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';

const LEASE_MS = 1_500;

/**
 * Drill "holder killed" on the ZooKeeper store. Proves: a holder that dies without releasing (SIGKILL: no
 * shutdown hook runs, nothing deletes its node) blocks the key only until the ensemble expires its session,
 * whose timeout is the lease; the waiter already in line is then served, with a greater fencing token.
 * (The contract suite's "holder that never releases" is a live process keeping its own deadline; this is
 * the ensemble doing it for a dead one.)
 */
describe('drill: a ZooKeeper lock holder is killed with SIGKILL', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let app: LockApp;

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    app = await createLockApp({ store: 'zookeeper', zookeeper: ensemble.connect, keyPrefix: prefix, leaseMs: LEASE_MS });
  });
  afterAll(async () => {
    await app?.close();
    await ensemble?.stop();
  });

  it('frees the key when the dead holder’s session expires, and the next grant is fenced above it', async () => {
    const holder = forkWorker(join(__dirname, '../lease/workers/hold.worker.ts'), [prefix, 'job', String(LEASE_MS)], {
      LOCK_TEST_STORE: 'zookeeper',
      ZOOKEEPER_CONNECT: ensemble.connect,
      LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ leaseMs: LEASE_MS }),
    });
    const { fencingToken } = await nextMessage<{ held: boolean; fencingToken: number }>(holder);
    holder.kill('SIGKILL');
    await exitOf(holder);

    // Unless this process stalled past the session meanwhile, the dead holder's node still holds the key.
    const left = await app.store.inspect('job');
    if (left) expect(left).toMatchObject({ fencingToken, ttlMs: LEASE_MS });
    const lease = await app.locks.acquire('job', { waitMs: 20 * LEASE_MS });
    expect(lease.fencingToken).toBeGreaterThan(fencingToken);
    await lease.release();
  });
});
