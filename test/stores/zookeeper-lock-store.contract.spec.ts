import { startZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { createZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-client.factory';
import { testPrefix } from '../support/test-prefix';
import { describeLockStoreContract } from './lock-store.contract';
import { describeSharedLockStoreContract } from './shared-lock-store.contract';

// The contract's expiry cases use leases of 30 ms and a 40 ms minimum hold, and renew a 1 s lease to
// 20 s: one session of 20 s carries them all here (the live process keeps the shorter leases itself; the
// module's default opens a session per lease length instead, see zookeeper-module.spec).
const openStore = (name: string) => async () => {
  const ensemble = await startZookeeperEnsemble();
  const store = await createZookeeperLockStore(ensemble.connect, {
    keyPrefix: testPrefix(`${__filename}:${name}`),
    commandTimeoutMs: 5_000,
    sessionTimeoutMs: 20_000,
  });
  return { store, cleanup: () => ensemble.stop() };
};

describeLockStoreContract('ZookeeperLockStore', openStore('plain'));

// Read/write locks and semaphores queue with plain locks under the lock's one parent node, in sequence
// order (queue/queue-order.ts). A waiting writer keeps readers out by its node in that queue; a writer's
// single attempt keeps nobody out.
describeSharedLockStoreContract('ZookeeperLockStore', openStore('shared'), { waitingWriters: 'queue' });
