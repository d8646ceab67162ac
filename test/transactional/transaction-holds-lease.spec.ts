import { LockReentryError, trackTransaction } from '../../lib/index';
import { gate } from '../decorator/locked-app';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';

/** A transaction boundary whose COMMIT the test lets happen, logging what happens around it. */
function transaction(log: string[], commit: Promise<void>) {
  return <T>(work: () => Promise<T>): Promise<T> =>
    trackTransaction(async (run: () => Promise<T>) => {
      log.push('BEGIN');
      const value = await run();
      await commit;
      log.push('COMMIT');
      return value;
    }, work);
}

describe('a transaction that ran work under a lease holds it until it completes', () => {
  const prefix = testPrefix(__filename);
  let holder: LockApp;
  let rival: LockApp;

  beforeAll(async () => {
    holder = await createLockApp({ store: 'memory', keyPrefix: prefix });
    rival = await createLockApp({ store: 'memory', keyPrefix: prefix });
    holder.events.on('released', (e) => log.push(`released ${e.key}`));
  });
  afterAll(async () => {
    await holder.close();
    await rival.close();
  });
  const log: string[] = [];
  beforeEach(() => log.splice(0));

  it('keeps the key until COMMIT when a joined call’s transaction outlives the scope that took the lease', async () => {
    const commit = gate();
    const joinedWrote = gate();
    const outer = holder.locks.withLock('order:detached-tx', { reentrant: true }, async () => {
      void transaction(log, commit.promise)(() =>
        holder.locks.withLock('order:detached-tx', { reentrant: true }, async () => {
          log.push('joined write');
          joinedWrote.open();
        }),
      );
      await joinedWrote.promise;
      return 'outer done';
    });
    await joinedWrote.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(await rival.locks.tryAcquire('order:detached-tx')).toBeNull();
    commit.open();
    expect(await outer).toBe('outer done');
    expect(log).toEqual(['BEGIN', 'joined write', 'COMMIT', 'released order:detached-tx']);
  });

  it('fails a manual acquire of a key its transaction holds at once, instead of waiting for itself', async () => {
    const commit = gate();
    commit.open();
    await transaction(log, commit.promise)(async () => {
      await holder.locks.withLock('order:manual', async () => 'reserved');
      const error = await holder.locks.acquire('order:manual', { waitMs: 60_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockReentryError);
      expect(error).toMatchObject({ heldBy: 'transaction' });
      await expect(holder.locks.tryAcquire('order:manual')).rejects.toBeInstanceOf(LockReentryError);
    });
  });
});
