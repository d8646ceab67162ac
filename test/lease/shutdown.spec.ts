import { LockStoreUnavailableError, MemoryLockStore } from '../../lib/index';
import { GatedStore } from '../support/gated-store';
import { createLockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';

describe('shutdown never hands a lease out unwatched', () => {
  const prefix = testPrefix(__filename);

  it('refuses a grant that arrives after app.close() began, and gives the key back', async () => {
    const store = new GatedStore(new MemoryLockStore({ keyPrefix: prefix }));
    const app = await createLockApp({ store, shutdownGraceMs: 5_000 });
    const granting = store.hold('acquire');
    const acquiring = app.locks.acquire('in-flight').catch((error: unknown) => error);
    await granting.entered;
    const closing = app.close();
    // Nest reaches our shutdown hook a few steps into close(): let the grant through only once it has.
    while (!(await app.locks.checkHealth()).shuttingDown) await new Promise((resolve) => setImmediate(resolve));
    granting.open();
    const outcome = await acquiring;
    await closing;
    expect(outcome).toBeInstanceOf(LockStoreUnavailableError);
    expect((outcome as Error).message).toContain('shutting down');
    expect(await new MemoryLockStore({ keyPrefix: prefix }).inspect('in-flight')).toBeNull();
  });

  it('ends waits in progress at shutdown instead of keeping app.close() until their waitMs', async () => {
    const other = await createLockApp({ store: 'memory', keyPrefix: `${prefix}wait:` });
    const app = await createLockApp({ store: 'memory', keyPrefix: `${prefix}wait:` });
    const held = await other.locks.acquire('busy');
    const contended = app.next('contention');
    const waiting = app.locks.acquire('busy', { waitMs: 600_000 }).catch((error: unknown) => error);
    await contended;
    await app.close();
    expect(await waiting).toBeInstanceOf(LockStoreUnavailableError);
    await held.release();
    await other.close();
  });

  it('keeps what remains of minHoldMs when it gives up a lease at shutdown, so the cron tick is not run again at once', async () => {
    const app = await createLockApp({ store: 'memory', keyPrefix: `${prefix}cron:`, shutdownGraceMs: 0 });
    const tick = await app.locks.acquire('job:close-expired', { minHoldMs: 60_000 });
    await app.close();
    expect(tick.signal.aborted).toBe(true);
    const kept = await new MemoryLockStore({ keyPrefix: `${prefix}cron:` }).inspect('job:close-expired');
    expect(kept).not.toBeNull();
    expect(kept!.ttlMs).toBeGreaterThan(50_000);
  });
});
