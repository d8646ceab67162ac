import { Injectable } from '@nestjs/common';
import { Client } from 'pg';
import {
  DistributedLock,
  fencedSqlUpdate,
  LockService,
  LockStore,
  LockNotAcquiredError,
  LockStoreUnavailableError,
  StaleFencingTokenError,
  trackTransaction,
  type Lease,
  type LockEventMap,
  type LockEventName,
  type LockModuleOptions,
  type LockWakeUps,
} from '../../lib/index';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { startLockedApp, type LockedApp } from '../decorator/locked-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { inMemoryMetrics, type MetricSnapshot } from './metric-snapshot';

@Injectable()
class OrderService {
  @DistributedLock({ key: 'order:{orderId}', waitMs: 10_000 })
  async pay(orderId: string): Promise<string> {
    return `paid ${orderId}`;
  }

  @DistributedLock({ key: 'job:close-expired', waitMs: 0, onLocked: 'skip' })
  async closeExpired(): Promise<string> {
    return 'closed';
  }
}

const STORE = { 'distributed_lock.store': 'redis' };
const named = (name: string, more: Record<string, string> = {}) => ({ ...STORE, 'distributed_lock.name': name, ...more });

/**
 * The seeds' monitoring table, read back from a real OpenTelemetry SDK after a scripted run on real servers:
 * two applications contending for keys on one Redis, a lease taken away (and the old holder's write refused
 * by the SQL fencing helper on PostgreSQL), a release deferred to a transaction, and a third application
 * whose Redis is stopped. Counts are asserted exactly; what depends on timing (how many renewals happened,
 * how a waiter was woken) is asserted equal to what the events reported.
 */
describe('OpenTelemetry metrics for the seeds’ monitoring table', () => {
  const prefix = testPrefix(__filename);
  const { meterProvider, collect } = inMemoryMetrics();
  const otel: LockModuleOptions = { openTelemetry: { meterProvider } };
  let outageRedis: RedisServer;
  let postgres: PostgresServer;
  let db: Client;
  let a: LockedApp;
  let b: LockedApp;
  let c: LockedApp;

  beforeAll(async () => {
    [outageRedis, postgres] = await Promise.all([startRedisServer(), startPostgresServer()]);
    db = new Client({ connectionString: postgres.url });
    await db.connect();
    await db.query('CREATE TABLE ledger_rows (id text PRIMARY KEY, value text, fence bigint)');
    await db.query(`INSERT INTO ledger_rows (id, value) VALUES ('ledger', 'initial')`);
    [a, b, c] = await Promise.all([
      // Waiters that race (`queue: false`): the seeds' table counts a retry per release notice and per backoff
      // wake-up, which queued waiters (the default) do not make; their wake-ups are refused-subscription.spec's.
      startLockedApp({ lock: { redis: redisUrl(), keyPrefix: prefix, queue: false, ...otel }, providers: [OrderService] }),
      startLockedApp({ lock: { redis: redisUrl(), keyPrefix: prefix, leaseMs: 1_000, queue: false, ...otel }, providers: [OrderService] }),
      startLockedApp({ lock: { redis: outageRedis.url, keyPrefix: prefix, leaseMs: 1_000, commandTimeoutMs: 200, ...otel } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), c?.close()]);
    await db?.end();
    await Promise.all([outageRedis?.stop(), postgres?.stop()]);
    await meterProvider.shutdown();
  });

  const locks = (app: LockedApp) => app.get(LockService);
  const next = <E extends LockEventName>(app: LockedApp, event: E, key: string) => app.next(event, (e: LockEventMap[E]) => e.key === key);
  const all = <E extends LockEventName>(event: E): LockEventMap[E][] => [a, b, c].flatMap((app) => app.recorded(event));
  const write = (lease: Lease, value: string) =>
    fencedSqlUpdate(db, { table: 'ledger_rows', fenceColumn: 'fence', set: { value }, where: { id: 'ledger' }, fencedBy: lease });
  const inTransaction = <T>(work: () => Promise<T>) =>
    trackTransaction(async (run: () => Promise<T>) => {
      await db.query('BEGIN');
      try {
        const result = await run();
        await db.query('COMMIT');
        return result;
      } catch (error) {
        await db.query('ROLLBACK');
        throw error;
      }
    }, work);

  let metrics: MetricSnapshot;
  let whileHeld: MetricSnapshot;

  beforeAll(async () => {
    // 1. A contended key: B holds order:1 (a manual scope, no name), A's locked method waits for it.
    const held = await locks(b).acquire('order:1');
    const contention = next(a, 'contention', 'order:1');
    const paying = a.get(OrderService).pay('1');
    await contention;
    whileHeld = await collect();
    await held.release();
    expect(await paying).toBe('paid 1');

    // A wait that runs out: woken by backoff (and at its deadline) while the key stays taken.
    const blocking = await locks(b).acquire('order:3');
    await expect(locks(a).acquire('order:3', { name: 'order:{orderId}', waitMs: 1_000 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    await blocking.release();

    // 2. A cron-style method with waitMs 0 skips a key held elsewhere.
    const job = await locks(b).acquire('job:close-expired');
    expect(await a.get(OrderService).closeExpired()).toBeUndefined();
    await job.release();

    // 3. A waiter whose caller gives up.
    const other = await locks(b).acquire('order:2');
    const abort = new AbortController();
    const waiting = locks(a).acquire('order:2', { waitMs: 10_000, signal: abort.signal });
    await next(a, 'contention', 'order:2');
    abort.abort(new Error('client went away'));
    await expect(waiting).rejects.toThrow('client went away');
    await other.release();

    // 4. A lost lease: the key is taken from B (as an operator's force-release would); B's next renewal is
    // refused. A takes over and writes inside a transaction (its release deferred until COMMIT); B's late
    // write with its old fencing token is refused by the SQL helper.
    const old = await locks(b).acquire('ledger', { name: 'ledger-entry' });
    const lost = next(b, 'lost', 'ledger');
    await b.get<LockStore>(LockStore).forceRelease('ledger', old.fencingToken);
    expect(await lost).toMatchObject({ reason: 'rejected' });
    const released = next(a, 'released', 'ledger');
    await inTransaction(() => locks(a).withLock('ledger', { name: 'ledger-entry' }, (lease) => write(lease, 'new holder')));
    await released;
    await expect(write(old, 'old holder')).rejects.toBeInstanceOf(StaleFencingTokenError);
    await expect(old.release()).rejects.toThrow();

    // 5. A store outage: C holds a lease when its Redis stops; acquiring fails closed, the lease is lost at
    // its deadline.
    await locks(c).acquire('nightly:2024-06-01', { name: 'nightly' });
    const expired = next(c, 'lost', 'nightly:2024-06-01');
    await outageRedis.stop();
    await expect(locks(c).acquire('report:7', { name: 'report', waitMs: 0 })).rejects.toBeInstanceOf(LockStoreUnavailableError);
    expect(await expired).toMatchObject({ reason: 'expired' });

    metrics = await collect();
  });

  it('counts acquisitions by outcome, named by key template or given name, with their wait time', () => {
    const acquisitions = (match: Record<string, string>) => metrics.count('distributed_lock.acquire.duration', match);
    const granted = { 'distributed_lock.acquire.outcome': 'granted' };
    expect(acquisitions(named('order:{orderId}', granted))).toBe(1);
    expect(acquisitions(named('order:{orderId}', { 'distributed_lock.acquire.outcome': 'not_acquired' }))).toBe(1);
    expect(acquisitions(named('job:close-expired', { 'distributed_lock.acquire.outcome': 'not_acquired' }))).toBe(1);
    expect(acquisitions(named('ledger-entry', granted))).toBe(2);
    expect(acquisitions(named('nightly', granted))).toBe(1);
    expect(acquisitions(named('report', { 'distributed_lock.acquire.outcome': 'store_unavailable' }))).toBe(1);
    // B's manual scopes (order:1, job:close-expired, order:2) carry no name; A's aborted wait neither.
    const unnamed = metrics.points('distributed_lock.acquire.duration').filter((p) => p.attributes['distributed_lock.name'] === undefined);
    expect(unnamed.map((p) => [p.attributes['distributed_lock.acquire.outcome'], (p.value as { count: number }).count]).sort()).toEqual([
      ['aborted', 1],
      ['granted', 4],
    ]);
    expect(acquisitions({})).toBe(all('acquired').length + all('not-acquired').length + all('store-unavailable').length);
    expect(acquisitions({})).toBe(12);
    // The waits, in seconds, are the events' own.
    const waited = all('acquired').filter((e) => e.name === 'order:{orderId}')[0]!.waitedMs / 1000;
    expect(metrics.sum('distributed_lock.acquire.duration', named('order:{orderId}', granted))).toBeCloseTo(waited, 6);
    expect(metrics.instrument('distributed_lock.acquire.duration').descriptor.unit).toBe('s');
  });

  it('reports retries and wake-ups per acquisition: the waiter tried once, once more after subscribing, then once per wake-up', () => {
    const [paid] = a.recorded('acquired').filter((e) => e.key === 'order:1');
    const [timedOut] = a.recorded('not-acquired').filter((e) => e.key === 'order:3');
    const total = (wakeUps: LockWakeUps) => Object.values(wakeUps).reduce((sum: number, n: number) => sum + n, 0);
    for (const waiter of [paid!, timedOut!]) expect(waiter.attempts).toBe(2 + total(waiter.wakeUps));
    expect(timedOut).toMatchObject({ reason: 'taken' });
    expect(total(timedOut!.wakeUps)).toBeGreaterThan(0);
    expect(metrics.sum('distributed_lock.acquire.attempts', named('order:{orderId}'))).toBe(paid!.attempts + timedOut!.attempts);
    for (const cause of ['notification', 'backoff', 'expiry', 'deadline'] as const) {
      expect(metrics.count('distributed_lock.acquire.wake_ups', named('order:{orderId}', { 'distributed_lock.wake_up.cause': cause }))).toBe(
        paid!.wakeUps[cause] + timedOut!.wakeUps[cause],
      );
    }
    // An uncontended acquisition and a skipped one take one store call each.
    expect(metrics.sum('distributed_lock.acquire.attempts', named('nightly'))).toBe(1);
    expect(metrics.sum('distributed_lock.acquire.attempts', named('job:close-expired'))).toBe(1);
  });

  it('shows the current holders while held and none once every lease ended', () => {
    expect(whileHeld.count('distributed_lock.held', STORE)).toBe(1);
    expect(whileHeld.points('distributed_lock.held.max_duration', STORE)).toHaveLength(1);
    expect(metrics.count('distributed_lock.held')).toBe(0);
    // The longest current hold per name reads 0 once nothing is held (not its last value).
    expect(metrics.points('distributed_lock.held.max_duration').map((point) => point.value)).toEqual(
      metrics.points('distributed_lock.held.max_duration').map(() => 0),
    );
    expect(metrics.count('distributed_lock.renew.overdue')).toBe(0);
  });

  it('records hold times by how the lease ended', () => {
    const holds = (outcome: string, name?: string) =>
      metrics.count('distributed_lock.hold.duration', { ...(name ? named(name) : STORE), 'distributed_lock.hold.outcome': outcome });
    expect(holds('lost', 'ledger-entry')).toBe(1);
    expect(holds('lost', 'nightly')).toBe(1);
    expect(holds('released', 'ledger-entry')).toBe(1);
    expect(holds('released', 'order:{orderId}')).toBe(1);
    expect(holds('released')).toBe(all('released').length);
    expect(metrics.count('distributed_lock.hold.duration')).toBe(all('acquired').length);
  });

  it('counts renewals by outcome with their latency, and leases lost by reason', () => {
    const renewals = (outcome: string) => metrics.count('distributed_lock.renew.duration', { 'distributed_lock.renew.outcome': outcome });
    expect(renewals('rejected')).toBe(1);
    expect(renewals('renewed')).toBe(all('renewed').length);
    expect(renewals('failed')).toBe(all('renew-failed').length);
    expect(metrics.count('distributed_lock.lost', named('ledger-entry', { 'distributed_lock.lost.reason': 'rejected' }))).toBe(1);
    expect(metrics.count('distributed_lock.lost', named('nightly', { 'distributed_lock.lost.reason': 'expired' }))).toBe(1);
    expect(metrics.count('distributed_lock.lost')).toBe(2);
  });

  it('counts the release deferred to the transaction and the stale write refused, once for two applications', () => {
    expect(metrics.count('distributed_lock.release.deferred', named('ledger-entry'))).toBe(1);
    expect(metrics.count('distributed_lock.release.deferred')).toBe(1);
    expect(metrics.points('distributed_lock.fencing.stale_writes')).toEqual([
      { attributes: { 'distributed_lock.fencing.resource': 'ledger_rows', 'distributed_lock.fencing.helper': 'sql' }, value: 1 },
    ].map((point) => expect.objectContaining(point)));
  });

  it('never uses a key, a token or a fencing token as a metric attribute: only small fixed sets of values', () => {
    const allowed = [
      'distributed_lock.store',
      'distributed_lock.name',
      'distributed_lock.acquire.outcome',
      'distributed_lock.wake_up.cause',
      'distributed_lock.hold.outcome',
      'distributed_lock.renew.outcome',
      'distributed_lock.lost.reason',
      'distributed_lock.fencing.resource',
      'distributed_lock.fencing.helper',
    ];
    expect([...metrics.attributeNames()].filter((name) => !allowed.includes(name))).toEqual([]);
    const values = new Set(metrics.metrics.flatMap((m) => m.dataPoints.flatMap((point) => Object.values(point.attributes))));
    for (const key of ['order:1', 'order:2', 'ledger', 'nightly:2024-06-01', 'report:7']) expect(values.has(key)).toBe(false);
  });

  it('gives every duration in seconds with the bucket advice of db.client.operation.duration', () => {
    const buckets = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];
    for (const name of ['distributed_lock.acquire.duration', 'distributed_lock.renew.duration']) {
      const [point] = metrics.points(name);
      expect(metrics.instrument(name).descriptor.unit).toBe('s');
      expect((point!.value as { buckets: { boundaries: number[] } }).buckets.boundaries).toEqual(buckets);
    }
    const [hold] = metrics.points('distributed_lock.hold.duration');
    expect((hold!.value as { buckets: { boundaries: number[] } }).buckets.boundaries).toEqual([...buckets, 30, 60, 300, 900, 3600]);
  });

});
