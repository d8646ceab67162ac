import { join } from 'node:path';
import { exitOf, forkWorker, nextMessage } from '../support/child-process';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { openPostgresTestDatabase, type PostgresTestDatabase } from '../stores/postgres-test-database';
import type { LockModuleOptions } from '../../lib/index';
import { postgresWorkerEnv } from './workers/worker-store';

const LEASE_MS = 1_000;

interface Store {
  readonly options: (prefix: string) => LockModuleOptions;
  /** The workers' environment: which store they lock on. */
  readonly env: () => NodeJS.ProcessEnv;
}

let db: PostgresTestDatabase | undefined;
let etcd: EtcdCluster | undefined;
let zookeeper: ZookeeperEnsemble | undefined;
afterAll(async () => {
  await db?.stop();
  await etcd?.stop();
  await zookeeper?.stop();
});

const FAIR = { LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ fair: true }) };

const STORES: Array<[string, Store]> = [
  ['Redis', { options: (keyPrefix) => ({ redis: redisUrl(), keyPrefix }), env: () => ({}) }],
  // Waiters in the key's queue: the first in line looks again when the dead holder's hold runs out.
  ['Redis, fair: true', { options: (keyPrefix) => ({ redis: redisUrl(), keyPrefix, fair: true }), env: () => FAIR }],
  ['PostgreSQL', { options: (keyPrefix) => ({ store: 'postgres', postgres: db!.url, keyPrefix }), env: () => postgresWorkerEnv(db!.url) }],
  // A 500 ms election timeout makes the server's shortest lease 1 s, so LEASE_MS is one it grants as asked.
  [
    'etcd',
    {
      options: (keyPrefix) => ({ store: 'etcd', etcd: etcd!.endpoints, keyPrefix }),
      env: () => ({ LOCK_TEST_STORE: 'etcd', ETCD_ENDPOINTS: etcd!.endpoints.join(',') }),
    },
  ],
  // The holder's lease is its session of LEASE_MS: the ensemble deletes its node when it expires.
  [
    'ZooKeeper',
    {
      options: (keyPrefix) => ({ store: 'zookeeper', zookeeper: zookeeper!.connect, keyPrefix }),
      env: () => ({ LOCK_TEST_STORE: 'zookeeper', ZOOKEEPER_CONNECT: zookeeper!.connect }),
    },
  ],
];

describe.each(STORES)('liveness of shaped locks on %s: a SIGKILLed holder', (name, store) => {
  const prefix = testPrefix(`${__filename}:${name}`);
  let app: LockApp;
  beforeAll(async () => {
    if (name === 'PostgreSQL') db = await openPostgresTestDatabase(__filename);
    if (name === 'etcd') etcd = await startEtcdCluster({ heartbeatMs: 50, electionMs: 500 });
    if (name === 'ZooKeeper') zookeeper = await startZookeeperEnsemble();
    app = await createLockApp(store.options(prefix));
  });
  afterAll(() => app.close());

  const killedHolder = async (key: string, shape: string): Promise<number> => {
    const holder = forkWorker(join(__dirname, 'workers/hold.worker.ts'), [prefix, key, String(LEASE_MS), '0', shape], store.env());
    const { fencingToken } = await nextMessage<{ held: boolean; fencingToken: number }>(holder);
    holder.kill('SIGKILL');
    await exitOf(holder);
    const left = await app.store.inspect(key);
    expect(left?.fencingToken).toBe(fencingToken);
    expect(left!.ttlMs).toBeLessThanOrEqual(LEASE_MS);
    return fencingToken;
  };

  it('gives a killed reader’s share back after its lease: the writer it kept out gets in', async () => {
    const fencingToken = await killedHolder('report', JSON.stringify({ mode: 'read' }));
    expect(await app.locks.tryAcquire('report', { mode: 'write' })).toBeNull();
    const writer = await app.locks.acquire('report', { mode: 'write', waitMs: 20 * LEASE_MS });
    expect(writer.fencingToken).toBeGreaterThan(fencingToken);
    expect(app.recorded('acquired').at(-1)!.attempts).toBeGreaterThan(1);
    await writer.release();
  });

  it('gives a killed holder’s permit back after its lease, never held by nobody', async () => {
    const fencingToken = await killedHolder('partner', JSON.stringify({ permits: 1 }));
    expect(await app.locks.tryAcquire('partner', { permits: 1 })).toBeNull();
    const permit = await app.locks.acquire('partner', { permits: 1, waitMs: 20 * LEASE_MS });
    expect(permit.fencingToken).toBeGreaterThan(fencingToken);
    expect((await app.store.list('partner')).map((lock) => lock.fencingToken)).toEqual([permit.fencingToken]);
    await permit.release();
  });
});
