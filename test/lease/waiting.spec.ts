import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { LockNotAcquiredError } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

describe('waiting for a held key', () => {
  const prefix = testPrefix(__filename);
  let holder: LockApp;
  let waiter: LockApp;

  beforeAll(async () => {
    holder = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 60_000 });
    // No fallback polling to speak of: only a release notification can wake this waiter in time.
    waiter = await createLockApp({
      redis: redisUrl(),
      keyPrefix: prefix,
      leaseMs: 60_000,
      retryMinDelayMs: 60_000,
      retryMaxDelayMs: 60_000,
    });
  });
  afterAll(async () => {
    await holder.close();
    await waiter.close();
  });

  it('wakes a waiter when the holder releases', async () => {
    const lease = await holder.locks.acquire('woken');
    const contention = waiter.next('contention', (e) => e.key === 'woken');
    const waiting = waiter.locks.acquire('woken', { waitMs: 50_000 });
    expect((await contention).holderTtlMs).toBeGreaterThan(0);
    await lease.release();
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
    const acquired = waiter.recorded('acquired').find((e) => e.key === 'woken')!;
    // First attempt, the re-check right after subscribing, and the attempt the notification triggered.
    expect(acquired.attempts).toBeLessThanOrEqual(3);
    await next.release();
  });

  it('gives up after waitMs with LockNotAcquiredError naming the key and the time waited', async () => {
    const lease = await holder.locks.acquire('busy');
    const started = Date.now();
    const error = await waiter.locks.acquire('busy', { waitMs: 300 }).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    await lease.release();
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as LockNotAcquiredError).message).toContain('"busy"');
    expect((error as LockNotAcquiredError).waitedMs).toBeGreaterThanOrEqual(300);
    // Bounded: it did not sleep on until the holder's 60 s lease or the 60 s retry delay ran out.
    expect(elapsed).toBeLessThan(30_000);
  });

  it('makes exactly one attempt with waitMs 0 and with tryAcquire', async () => {
    const lease = await holder.locks.acquire('once');
    await expect(waiter.locks.acquire('once', { waitMs: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(await waiter.locks.tryAcquire('once')).toBeNull();
    await lease.release();
    expect(waiter.recorded('contention').filter((e) => e.key === 'once')).toHaveLength(2);
  });

  it('stops waiting when the caller aborts, and leaves the key to its holder', async () => {
    const lease = await holder.locks.acquire('aborted');
    const controller = new AbortController();
    const contention = waiter.next('contention', (e) => e.key === 'aborted');
    const waiting = waiter.locks.acquire('aborted', { waitMs: 50_000, signal: controller.signal });
    await contention;
    controller.abort(new Error('client went away'));
    await expect(waiting).rejects.toThrow('client went away');
    expect((await holder.store.inspect('aborted'))?.fencingToken).toBe(lease.fencingToken);
    await lease.release();
  });

  it('serves the waiters of one application in arrival order, one store attempt per hand-off', async () => {
    const order: number[] = [];
    const contentionBefore = waiter.recorded('contention').filter((e) => e.key === 'queue').length;
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        waiter.locks.withLock('queue', { waitMs: 50_000 }, async () => {
          order.push(i);
        }),
      ),
    );
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Only the head of the local queue asks the store; each of the 7 later heads is denied once at most.
    const acquired = waiter.recorded('acquired').filter((e) => e.key === 'queue').slice(-8);
    expect(acquired.reduce((sum, e) => sum + e.attempts, 0)).toBeLessThanOrEqual(8 + 7 * 2);
    expect(waiter.recorded('contention').filter((e) => e.key === 'queue').length - contentionBefore).toBeLessThanOrEqual(7);
  });

  it('makes a caller that just released queue behind those already waiting', async () => {
    const order: string[] = [];
    const first = await waiter.locks.acquire('regrab');
    const contention = waiter.next('contention', (e) => e.key === 'regrab');
    const other = waiter.locks.withLock('regrab', { waitMs: 50_000 }, async () => void order.push('waiting caller'));
    await contention;
    await first.release();
    await waiter.locks.withLock('regrab', { waitMs: 50_000 }, async () => void order.push('releasing caller again'));
    await other;
    expect(order).toEqual(['waiting caller', 'releasing caller again']);
  });

  it('lets many callers of one application wait at once without a MaxListenersExceededWarning', () => {
    // Node reports the warning on the real process, which Jest's sandbox does not see: a child process runs it.
    const child = spawnSync(process.execPath, ['-r', join(__dirname, '../support/register-ts.cjs'), join(__dirname, 'many-waiters.script.ts')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout.trim())).toEqual({ entered: 24, warnings: [] });
  });
});
