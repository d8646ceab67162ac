import { join } from 'node:path';
import { forkWorker, exitOf, nextMessage } from '../support/child-process';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

const LEASE_MS = 1_500;

// The fair queue grants through its own script (acquire-queued): its grant must expire as the plain one's.
describe.each([
  ['default', {}],
  ['fair: true', { fair: true }],
])('liveness (%s)', (mode, moduleOptions) => {
  const prefix = `${testPrefix(__filename)}${mode === 'default' ? '' : 'fair:'}`;
  const workerEnv = { LOCK_TEST_MODULE_OPTIONS: JSON.stringify(moduleOptions) };
  let app: LockApp;

  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, ...moduleOptions });
  });
  afterAll(() => app.close());

  it('a holder killed with SIGKILL blocks others for at most its lease', async () => {
    const holder = forkWorker(join(__dirname, 'workers/hold.worker.ts'), [prefix, 'job', String(LEASE_MS)], workerEnv);
    const { fencingToken } = await nextMessage<{ held: boolean; fencingToken: number }>(holder);
    // Its watchdog has been renewing; what bounds the outage is the TTL left at the moment it dies.
    holder.kill('SIGKILL');
    await exitOf(holder);
    const left = await app.store.inspect('job');
    expect(left).not.toBeNull();
    expect(left!.ttlMs).toBeLessThanOrEqual(LEASE_MS);

    expect(await app.locks.tryAcquire('job')).toBeNull();
    const lease = await app.locks.acquire('job', { waitMs: 20 * LEASE_MS });
    expect(lease.fencingToken).toBeGreaterThan(fencingToken);
    expect(app.recorded('acquired').at(-1)!.attempts).toBeGreaterThan(1);
    await lease.release();
  });
});
