import { join } from 'node:path';
import { postgresWorkerEnv } from '../lease/workers/worker-store';
import { exitOf, forkWorker } from '../support/child-process';
import { openPostgresTestDatabase, type PostgresTestDatabase } from './postgres-test-database';

const PROCESSES = 3;
const LOOPS_PER_PROCESS = 2;
const ITERATIONS = 25;

describe('mutual exclusion across processes on the PostgreSQL store', () => {
  let db: PostgresTestDatabase;

  beforeAll(async () => {
    db = await openPostgresTestDatabase(__filename);
    await db.admin.query(`CREATE TABLE worker_counters (name text PRIMARY KEY, value bigint NOT NULL)`);
    await db.admin.query(`CREATE TABLE worker_history (name text NOT NULL, value bigint NOT NULL, fence bigint NOT NULL)`);
  });
  afterAll(() => db.stop());

  it('loses no increment when 3 processes do read-modify-write under one lock, and grants follow the writes', async () => {
    const workers = Array.from({ length: PROCESSES }, () =>
      forkWorker(
        join(__dirname, '../lease/workers/increment.worker.ts'),
        ['exclusion:', 'counter', String(LOOPS_PER_PROCESS), String(ITERATIONS)],
        postgresWorkerEnv(db.url),
      ),
    );
    expect(await Promise.all(workers.map(exitOf))).toEqual(workers.map(() => 0));

    const total = PROCESSES * LOOPS_PER_PROCESS * ITERATIONS;
    const { rows } = await db.admin.query(`SELECT value FROM worker_counters WHERE name = 'counter'`);
    expect(Number(rows[0].value)).toBe(total);
    // The recorded history: value n was written under a lease, and each later value under a later grant
    // (a strictly greater fencing token), so no two holders ever overlapped.
    const history = await db.admin.query(`SELECT value, fence FROM worker_history WHERE name = 'counter' ORDER BY value`);
    expect(history.rows.map((row: { value: string }) => Number(row.value))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const fences = history.rows.map((row: { fence: string }) => Number(row.fence));
    expect(fences.every((fence, i) => i === 0 || fence > fences[i - 1]!)).toBe(true);
  });
});
