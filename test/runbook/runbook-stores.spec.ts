import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { openPostgresTestDatabase, type PostgresTestDatabase } from '../stores/postgres-test-database';
import { RedlockMasters } from '../stores/redlock-test-support';
import { createLockApp, type LockApp } from '../support/lock-app';
import { runbookCli, type CliResult } from '../support/runbook-cli';
import { testPrefix } from '../support/test-prefix';

/** The CLI with no store variable in the environment: only the flag names the store. */
function cli(args: string[]): Promise<CliResult> {
  return runbookCli(args, { REDIS_URL: '', DATABASE_URL: '', ETCD_ENDPOINTS: '', ZOOKEEPER_CONNECT: '', REDLOCK_MASTERS: '' });
}

/** The same runbook session on any store: list, refuse a stale force-release, force-release the grant seen. */
async function runbookSession(app: LockApp, storeFlag: string[], prefix: string): Promise<void> {
  const lease = await app.locks.acquire('invoice:7');
  const listed = await cli(['list', 'invoice:*', ...storeFlag, '--prefix', prefix]);
  expect(listed).toMatchObject({ code: 0 });
  expect(listed.stdout).toContain(`invoice:7\tholder=pod-runbook\tfencing=${lease.fencingToken}`);
  const stale = await cli(['force-release', 'invoice:7', '--fencing-token', String(lease.fencingToken - 1), '--confirm', ...storeFlag, '--prefix', prefix]);
  expect(stale.code).not.toBe(0);
  expect(await app.store.inspect('invoice:7')).toMatchObject({ fencingToken: lease.fencingToken });
  const forced = await cli(['force-release', 'invoice:7', '--fencing-token', String(lease.fencingToken), '--confirm', ...storeFlag, '--prefix', prefix]);
  expect(forced).toMatchObject({ code: 0 });
  expect(forced.stdout).toContain('released invoice:7');
  expect(await app.store.inspect('invoice:7')).toBeNull();
  await lease.release().catch(() => undefined);
}

describe('runbook CLI on the PostgreSQL store', () => {
  const prefix = testPrefix(__filename);
  let db: PostgresTestDatabase;
  let app: LockApp;

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
    app = await createLockApp({ store: 'postgres', postgres: db.url, keyPrefix: prefix, holder: 'pod-runbook' });
  });
  afterAll(async () => {
    await app?.close();
    await db?.stop();
  });

  it('lists and force-releases through --postgres', () => runbookSession(app, ['--postgres', db.url], prefix));
});

describe('runbook CLI on the etcd store', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let app: LockApp;

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    app = await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, holder: 'pod-runbook', leaseMs: 10_000 });
  });
  afterAll(async () => {
    await app?.close();
    await cluster?.stop();
  });

  it('lists and force-releases through --etcd', () => runbookSession(app, ['--etcd', cluster.endpoints.join(',')], prefix));
});

describe('runbook CLI on the ZooKeeper store', () => {
  const prefix = testPrefix(__filename);
  let ensemble: ZookeeperEnsemble;
  let app: LockApp;

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    app = await createLockApp({ store: 'zookeeper', zookeeper: ensemble.connect, keyPrefix: prefix, holder: 'pod-runbook', leaseMs: 10_000 });
  });
  afterAll(async () => {
    await app?.close();
    await ensemble?.stop();
  });

  it('lists and force-releases through --zookeeper', () => runbookSession(app, ['--zookeeper', ensemble.connect], prefix));

  it('lists each reader of a key on a line of its own, named by its shape, and force-releases the one whose fencing token is given', async () => {
    const [kept, taken] = [await app.locks.acquire('report', { mode: 'read' }), await app.locks.acquire('report', { mode: 'read' })];
    const store = ['--zookeeper', ensemble.connect, '--prefix', prefix];
    const listed = await cli(['list', 'report', ...store]);
    expect(listed).toMatchObject({ code: 0 });
    for (const lease of [kept, taken]) expect(listed.stdout).toContain(`report\tread\tholder=pod-runbook\tfencing=${lease.fencingToken}`);
    const forced = await cli(['force-release', 'report', '--fencing-token', String(taken.fencingToken), '--confirm', ...store]);
    expect(forced).toMatchObject({ code: 0 });
    expect((await app.store.list('report')).map((lock) => [lock.fencingToken, lock.shape])).toEqual([[kept.fencingToken, 'read']]);
    await taken.release().catch(() => undefined);
    await kept.release();
  });

  it('refuses a --zookeeper address that is not a connect string before connecting', async () => {
    const refused = await cli(['list', '*', '--zookeeper', 'http://127.0.0.1:2181', '--prefix', prefix]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--zookeeper');
  });
});

describe('runbook CLI on the Redlock store', () => {
  const prefix = testPrefix(__filename);
  let masters: RedlockMasters;
  let app: LockApp;

  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
    app = await createLockApp({ store: 'redlock', redlock: { masters: masters.urls }, keyPrefix: prefix, holder: 'pod-runbook', leaseMs: 10_000 });
  });
  afterAll(async () => {
    await app?.close();
    await masters?.stop();
  });

  it('lists and force-releases through --redlock', () => runbookSession(app, ['--redlock', masters.urls.join(',')], prefix));

  it('says under which prefix the locks are when a --redlock listing under another finds none', async () => {
    const lease = await app.locks.acquire('invoice:8');
    try {
      const listed = await cli(['list', '--redlock', masters.urls.join(','), '--prefix', 'lock:']);
      expect(listed).toMatchObject({ code: 0 });
      expect(listed.stdout.trim()).toBe(`no held locks under 'lock:'; 1 held under '${prefix}' — did you mean --prefix ${prefix}?`);
    } finally {
      await lease.release();
    }
  });

  it('refuses a --redlock address with an even count of masters before connecting, without printing it', async () => {
    const refused = await cli(['list', '*', '--redlock', masters.urls.slice(0, 2).join(','), '--prefix', prefix]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--redlock');
    expect(refused.stderr).not.toContain(masters.urls[0]!);
  });
});
