import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createEtcdLockStore } from '../../lib/stores/etcd/etcd-client.factory';
import { testPrefix } from '../support/test-prefix';
import { describeLockStoreContract } from './lock-store.contract';
import { describeSharedLockStoreContract } from './shared-lock-store.contract';

// The contract's expiry cases use leases of 30 ms and a 40 ms minimum hold: far below etcd's one-second
// granularity, hence 'round-up' here (the store's default refuses such leases; see etcd-lease-length.spec).
// One member with a 500 ms election timeout: its minimum lease TTL is 1 s.
const openStore = (name: string) => async () => {
  const cluster: EtcdCluster = await startEtcdCluster({ heartbeatMs: 50, electionMs: 500 });
  const store = await createEtcdLockStore(cluster.endpoints, {
    keyPrefix: testPrefix(`${__filename}:${name}`),
    commandTimeoutMs: 5_000,
    shortLeases: 'round-up',
  });
  return { store, cleanup: () => cluster.stop() };
};

describeLockStoreContract('EtcdLockStore', openStore('plain'));

// Read/write locks and semaphores share each lock's one queue with plain locks (etcd-queue-order.ts). A
// waiting writer keeps readers out by its key in that queue; a writer's single attempt keeps nobody out.
describeSharedLockStoreContract('EtcdLockStore', openStore('shared'), { waitingWriters: 'queue' });
