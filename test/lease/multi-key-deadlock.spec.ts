import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { openPostgresTestDatabase, type PostgresTestDatabase } from '../stores/postgres-test-database';
import { exitOf, forkWorker } from '../support/child-process';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { postgresWorkerEnv } from './workers/worker-store';

const PROCESSES = 3;
const LOOPS_PER_PROCESS = 2;
const ITERATIONS = 25;

// Three processes transpile the library before any lock is taken; etcd and ZooKeeper start their servers.
jest.setTimeout(180_000);

/** A store the workers lock on: started for its section, its workers' environment, stopped after. */
interface StoreUnderTest {
  start(): Promise<NodeJS.ProcessEnv>;
  stop(): Promise<void>;
}

const redisStore = (): StoreUnderTest => ({ start: async () => ({}), stop: async () => undefined });

/** A store whose server the section starts (`open`) and stops (`close`), its workers pointed at it by `env`. */
function serverStore<S>(open: () => Promise<S>, env: (server: S) => NodeJS.ProcessEnv, close: (server: S) => Promise<void>): () => StoreUnderTest {
  return () => {
    let server: S | undefined;
    return {
      start: async () => env((server = await open())),
      stop: async () => (server === undefined ? undefined : close(server)),
    };
  };
}

const postgresStore = serverStore<PostgresTestDatabase>(
  () => openPostgresTestDatabase(__filename),
  (db) => postgresWorkerEnv(db.url),
  (db) => db.stop(),
);
const etcdStore = serverStore<EtcdCluster>(
  () => startEtcdCluster(),
  (cluster) => ({ LOCK_TEST_STORE: 'etcd', ETCD_ENDPOINTS: cluster.endpoints.join(',') }),
  (cluster) => cluster.stop(),
);
const zookeeperStore = serverStore<ZookeeperEnsemble>(
  () => startZookeeperEnsemble(),
  (ensemble) => ({ LOCK_TEST_STORE: 'zookeeper', ZOOKEEPER_CONNECT: ensemble.connect, LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ leaseMs: 10_000 }) }),
  (ensemble) => ensemble.stop(),
);

// Multi-key locks are built from each store's plain grants, so every store gets the same run; the counters
// stay on the run's Redis whichever store holds the locks.
describe.each([
  ['Redis', redisStore],
  ['PostgreSQL', postgresStore],
  ['etcd', etcdStore],
  ['ZooKeeper', zookeeperStore],
])('several keys at once across processes on %s', (name, makeStore) => {
  const store = makeStore();
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    env = await store.start();
  });
  afterAll(() => store.stop());

  it('never deadlocks when 3 processes lock the same two keys named in opposite orders, and loses no update to either', async () => {
    const prefix = testPrefix(`${__filename}:${name}`);
    const counterKey = `${prefix}value`;
    const redis = new Redis(redisUrl());
    try {
      const workers = Array.from({ length: PROCESSES }, (_, index) =>
        forkWorker(
          join(__dirname, 'workers/multi-key-increment.worker.ts'),
          [prefix, counterKey, index % 2 === 0 ? 'forward' : 'backward', String(LOOPS_PER_PROCESS), String(ITERATIONS)],
          env,
        ),
      );
      expect(await Promise.all(workers.map(exitOf))).toEqual(workers.map(() => 0));
      const total = PROCESSES * LOOPS_PER_PROCESS * ITERATIONS;
      expect(Number(await redis.get(`${counterKey}:x`))).toBe(total);
      expect(Number(await redis.get(`${counterKey}:y`))).toBe(total);
    } finally {
      redis.disconnect();
    }
  });
});
