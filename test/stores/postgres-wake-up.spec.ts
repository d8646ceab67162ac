import { randomBytes } from 'node:crypto';
import { PostgresLockStore } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { RecordingStore } from './postgres-recording-store';
import { eventually, openPostgresTestDatabase, type PostgresTestDatabase } from './postgres-test-database';

/**
 * Waiters on the PostgreSQL store are woken by the NOTIFY the release statement sends, over one LISTEN
 * connection per store. The waiter's fallback backoff is set to 10 minutes and the holder's lease to 10
 * minutes, so a waiter that gets in during the test was woken by a notification.
 */
describe('PostgresLockStore wake-ups by LISTEN/NOTIFY', () => {
  const prefix = `wake:${randomBytes(3).toString('hex')}:`;
  const applicationName = `wake-up-spec-${randomBytes(3).toString('hex')}`;
  const LONG = 600_000;
  let db: PostgresTestDatabase;
  let holder: LockApp;
  let recording: RecordingStore;
  let waiter: LockApp;

  const listenBackends = async (): Promise<number[]> =>
    (
      await db.admin.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, [applicationName])
    ).rows.map((row: { pid: number }) => row.pid);

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
    holder = await createLockApp({ store: 'postgres', postgres: db.url, keyPrefix: prefix, leaseMs: LONG });
    recording = new RecordingStore(
      await PostgresLockStore.create({ connection: { connectionString: db.url, application_name: applicationName }, keyPrefix: prefix }),
    );
    waiter = await createLockApp({ store: recording, retryMinDelayMs: LONG, retryMaxDelayMs: LONG, waitMs: LONG });
  });
  afterAll(async () => {
    await waiter?.close();
    await holder?.close();
    await db?.stop();
  });
  beforeEach(() => recording.timeline.splice(0));

  const denials = (n: number) => (timeline: readonly string[]) => timeline.filter((entry) => entry === 'denied').length >= n;

  it('wakes a waiter with the release, not with its backoff', async () => {
    const held = await holder.locks.acquire('order:1');
    const waiting = waiter.locks.acquire('order:1');
    // Denied, subscribed, denied again (the attempt right after subscribing catches an earlier release).
    await recording.until(denials(2));
    await held.release();
    const lease = await waiting;
    expect(recording.timeline).toEqual(['denied', 'denied', 'notified', 'granted']);
    expect(waiter.recorded('acquired').at(-1)).toMatchObject({ key: 'order:1', attempts: 3 });
    expect(lease.fencingToken).toBeGreaterThan(held.fencingToken);
    await lease.release();
  });

  it('listens on one connection for the whole store, however many keys are waited on', async () => {
    const keys = ['a', 'b', 'c', 'd'].map((k) => `many:${k}`);
    const held = await Promise.all(keys.map((key) => holder.locks.acquire(key)));
    const waiting = keys.map((key) => waiter.locks.acquire(key));
    await recording.until(denials(2 * keys.length));
    expect(await listenBackends()).toHaveLength(1);
    for (const lease of held) await lease.release();
    const leases = await Promise.all(waiting);
    expect(recording.timeline.filter((entry) => entry === 'notified')).toHaveLength(keys.length);
    for (const lease of leases) await lease.release();
  });

  it('re-establishes a dropped LISTEN connection, and waiters are woken by releases again', async () => {
    const held = await holder.locks.acquire('order:2');
    const waiting = waiter.locks.acquire('order:2');
    await recording.until(denials(2));
    const [dropped] = await listenBackends();
    await db.admin.query('SELECT pg_terminate_backend($1)', [dropped]);

    // Back on a new connection: every waiter is woken once (a release in the gap was missed), retries,
    // and waits again.
    await recording.until(denials(3));
    expect(recording.timeline).toEqual(['denied', 'denied', 'notified', 'denied']);
    await eventually(async () => {
      const backends = await listenBackends();
      return backends.length === 1 && backends[0] !== dropped;
    }, 'a new LISTEN connection');

    await held.release();
    const lease = await waiting;
    expect(recording.timeline).toEqual(['denied', 'denied', 'notified', 'denied', 'notified', 'granted']);
    await lease.release();
  });
});
