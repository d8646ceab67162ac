import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { expectExactIncrements } from './increment-workers';

describe('mutual exclusion across processes on etcd', () => {
  let cluster: EtcdCluster;
  beforeAll(async () => {
    cluster = await startEtcdCluster();
  });
  afterAll(() => cluster.stop());

  it('loses no increment when 3 processes do read-modify-write under one etcd lock, each write under a higher fencing token', () =>
    expectExactIncrements({
      file: __filename,
      env: { LOCK_TEST_STORE: 'etcd', ETCD_ENDPOINTS: cluster.endpoints.join(',') },
      processes: 3,
      loopsPerProcess: 2,
      iterations: 25,
    }));
});
