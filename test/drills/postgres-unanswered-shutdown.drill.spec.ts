import { LockStoreUnavailableError } from '../../lib/index';
import { createLockApp } from '../support/lock-app';
import { TcpProxy } from '../support/tcp-proxy';
import { eventually, openPostgresTestDatabase, type PostgresTestDatabase } from '../stores/postgres-test-database';

/**
 * Drill "the lock database stops answering, then the application shuts down" on the PostgreSQL store:
 * replies from PostgreSQL are lost (a TCP proxy drops what the server sends) while the sockets stay open,
 * as behind a dead NAT entry or a stalled network path. Proves: an acquire fails closed with an error
 * naming the server; `app.close()` then finishes although statements on the pool (the failed acquire, the
 * release of a lease held at shutdown) and the LISTEN connection never get an answer; and it leaves no
 * connection behind.
 */
describe('drill: the application closes while PostgreSQL answers nothing', () => {
  let db: PostgresTestDatabase;
  let proxy: TcpProxy;

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
    proxy = await TcpProxy.start(Number(new URL(db.url).port));
  });
  afterAll(async () => {
    await proxy?.close();
    await db?.stop();
  });

  it('fails an acquire closed, then app.close() finishes and leaves no connection open', async () => {
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    viaProxy.searchParams.set('application_name', 'blackholed');
    // No grace period: the lease held at shutdown is given up (a release statement) at once.
    const app = await createLockApp({
      store: 'postgres',
      postgres: viaProxy.toString(),
      keyPrefix: 'blackhole:',
      commandTimeoutMs: 300,
      shutdownGraceMs: 0,
    });
    const connections = async (): Promise<number> =>
      Number((await db.admin.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'blackholed'`)).rows[0].n);

    // A lease held at shutdown (its release is one more statement without an answer) and an open LISTEN.
    await app.locks.acquire('held', { leaseMs: 60_000 });
    await app.store.onRelease('held', () => undefined);
    expect(await connections()).toBeGreaterThanOrEqual(2);

    proxy.holdServerData();
    const body = jest.fn();
    const refused = await app.locks.withLock('payment', { waitMs: 0 }, body).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LockStoreUnavailableError);
    expect(String((refused as Error).cause)).toContain(`127.0.0.1:${proxy.port}`);
    expect(body).not.toHaveBeenCalled();

    await expect(app.close()).resolves.toBeUndefined();
    await eventually(async () => (await connections()) === 0, 'the server to see every connection of the closed application gone');
  }, 30_000);
});
