import { join } from 'node:path';
import { postgresWorkerEnv } from '../lease/workers/worker-store';
import { exitOf, forkWorker, nextMessage } from '../support/child-process';
import { createLockApp, type LockApp } from '../support/lock-app';
import { openPostgresTestDatabase, type PostgresTestDatabase } from '../stores/postgres-test-database';

const LEASE_MS = 1_500;

/**
 * Drill "holder killed" from the seeds, on the PostgreSQL store. Proves: a holder that dies without
 * releasing (SIGKILL: no shutdown hook runs) blocks the key for at most what is left of its lease, by the
 * database clock; then the next holder gets in with a greater fencing token.
 */
describe('drill: a PostgreSQL lock holder is killed with SIGKILL', () => {
  const prefix = 'killed:';
  let db: PostgresTestDatabase;
  let app: LockApp;

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
    app = await createLockApp({ store: 'postgres', postgres: db.url, keyPrefix: prefix });
  });
  afterAll(async () => {
    await app?.close();
    await db?.stop();
  });

  it('frees the key after the dead holder’s lease, and the next grant is fenced above it', async () => {
    const timeline: string[] = [];
    const holder = forkWorker(join(__dirname, '../lease/workers/hold.worker.ts'), [prefix, 'job', String(LEASE_MS)], postgresWorkerEnv(db.url));
    const { fencingToken } = await nextMessage<{ held: boolean; fencingToken: number }>(holder);
    timeline.push(`granted to the worker (fence ${fencingToken})`);
    holder.kill('SIGKILL');
    await exitOf(holder);
    timeline.push('worker killed');

    const left = await app.store.inspect('job');
    expect(left).toMatchObject({ fencingToken, holder: expect.stringContaining(':') });
    expect(left!.ttlMs).toBeLessThanOrEqual(LEASE_MS);
    if ((await app.locks.tryAcquire('job')) === null) timeline.push('denied while the lease runs');

    const lease = await app.locks.acquire('job', { waitMs: 20 * LEASE_MS });
    timeline.push(`granted to the app (fence ${lease.fencingToken})`);
    expect(lease.fencingToken).toBeGreaterThan(fencingToken);
    expect(app.recorded('acquired').at(-1)!.attempts).toBeGreaterThan(1);
    expect(timeline).toEqual([
      `granted to the worker (fence ${fencingToken})`,
      'worker killed',
      'denied while the lease runs',
      `granted to the app (fence ${lease.fencingToken})`,
    ]);
    await lease.release();
  });
});
