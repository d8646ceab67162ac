import { findZookeeper, startZookeeperEnsemble } from '../../scripts/servers/zookeeper-server.js';
import type { BenchStore } from './bench-store.js';

/**
 * ZooKeeper: a private standalone server from Debian's package on a free loopback port (the helper the
 * tests use), stock tick (2 s: sessions of 4–40 s, so the bench's 10 s lease is one the server grants).
 */
export const zookeeperBenchStore: BenchStore = {
  id: 'zookeeper',
  label: 'ZooKeeper (sequential nodes, session as the lease)',
  unavailable: () => (findZookeeper() ? undefined : 'ZooKeeper is not installed (apt-get install zookeeper default-jre-headless)'),
  async start() {
    const ensemble = await startZookeeperEnsemble({ tickMs: 2_000, maxSessionMs: 40_000 });
    return {
      description: `ZooKeeper 3.8 standalone at ${ensemble.connect} (private, started by the bench)`,
      options: (keyPrefix) => ({ store: 'zookeeper', zookeeper: ensemble.connect, keyPrefix }),
      stop: () => ensemble.stop(),
    };
  },
};
