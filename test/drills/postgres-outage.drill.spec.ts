import { LeaseLostError, LockStoreUnavailableError, type Lease } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { TcpProxy } from '../support/tcp-proxy';
import { openPostgresTestDatabase, type PostgresTestDatabase } from '../stores/postgres-test-database';

/**
 * Drill "database unreachable" on the PostgreSQL store: one instance's connections to PostgreSQL are cut
 * (a TCP proxy drops them and refuses new ones) while another instance keeps its own. Proves: the cut-off
 * instance runs no protected code (fail closed, with an error naming the server); its held lease is
 * reported lost before its TTL could let someone else in unnoticed; the healthy instance takes the key with
 * a greater fencing token; once the network is back, the cut-off instance locks again.
 */
describe('drill: an instance loses its connection to the lock database', () => {
  const prefix = 'outage:';
  let db: PostgresTestDatabase;
  let proxy: TcpProxy;
  let isolated: LockApp;
  let healthy: LockApp;

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
    const direct = new URL(db.url);
    proxy = await TcpProxy.start(Number(direct.port));
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    isolated = await createLockApp({ store: 'postgres', postgres: viaProxy.toString(), keyPrefix: prefix, leaseMs: 800, commandTimeoutMs: 200 });
    healthy = await createLockApp({ store: 'postgres', postgres: db.url, keyPrefix: prefix, leaseMs: 800 });
  });
  afterAll(async () => {
    await isolated?.close();
    await healthy?.close();
    await proxy?.close();
    await db?.stop();
  });

  it('fails closed, reports the held lease lost, lets the healthy instance in, and recovers after the cut', async () => {
    const timeline: string[] = [];
    isolated.events.on('acquired', (e) => timeline.push(`isolated granted ${e.key} (fence ${e.fencingToken})`));
    isolated.events.on('renew-failed', (e) => timeline.push(`isolated renew failed ${e.key}`));
    isolated.events.on('lost', (e) => timeline.push(`isolated lost ${e.key} (${e.reason})`));
    healthy.events.on('acquired', (e) => timeline.push(`healthy granted ${e.key} (fence ${e.fencingToken})`));

    let entered!: (lease: Lease) => void;
    const holding = new Promise<Lease>((resolve) => (entered = resolve));
    const lost = isolated.next('lost', (e) => e.key === 'invoice:7');
    const oldHolder = isolated.locks.withLock('invoice:7', async (lease) => {
      entered(lease);
      await new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
    });
    const oldLease = await holding;
    proxy.cut();
    timeline.push('cut');

    const body = jest.fn();
    const refused = await isolated.locks.withLock('payment', { waitMs: 0 }, body).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockStoreUnavailableError);
    expect(String((refused as Error).cause)).toContain(`127.0.0.1:${proxy.port}`);
    expect(body).not.toHaveBeenCalled();

    expect(await lost).toMatchObject({ key: 'invoice:7', reason: 'expired' });
    await expect(oldHolder).rejects.toBeInstanceOf(LeaseLostError);
    const newLease = await healthy.locks.acquire('invoice:7', { waitMs: 10_000 });
    expect(newLease.fencingToken).toBeGreaterThan(oldLease.fencingToken);
    await newLease.release();

    proxy.restore();
    timeline.push('restored');
    // Until the pool has reconnected, acquiring fails closed; then the instance locks normally again.
    let recovered: Lease | undefined;
    while (!recovered) {
      recovered = await isolated.locks.acquire('invoice:7', { waitMs: 10_000 }).catch((error: unknown) => {
        if (error instanceof LockStoreUnavailableError) return undefined;
        throw error;
      });
    }
    expect(recovered.fencingToken).toBeGreaterThan(newLease.fencingToken);
    await recovered.release();

    const at = (entry: string): number => timeline.indexOf(entry);
    expect(at(`isolated granted invoice:7 (fence ${oldLease.fencingToken})`)).toBe(0);
    expect(at('cut')).toBeLessThan(at('isolated renew failed invoice:7'));
    expect(at('isolated renew failed invoice:7')).toBeLessThan(at('isolated lost invoice:7 (expired)'));
    expect(at('isolated lost invoice:7 (expired)')).toBeLessThan(at(`healthy granted invoice:7 (fence ${newLease.fencingToken})`));
    expect(at('restored')).toBeLessThan(at(`isolated granted invoice:7 (fence ${recovered.fencingToken})`));
  });
});
