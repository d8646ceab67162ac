import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { expectExactIncrements } from './increment-workers';

describe('mutual exclusion across processes on ZooKeeper', () => {
  let ensemble: ZookeeperEnsemble;
  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
  });
  afterAll(() => ensemble.stop());

  it('loses no increment when 3 processes do read-modify-write under one ZooKeeper lock, each write under a higher fencing token', () =>
    expectExactIncrements({
      file: __filename,
      env: { LOCK_TEST_STORE: 'zookeeper', ZOOKEEPER_CONNECT: ensemble.connect, LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ leaseMs: 10_000 }) },
      processes: 3,
      loopsPerProcess: 2,
      iterations: 25,
    }));
});
