import { Redis } from 'ioredis';
import { LeaseLostError, type Lease } from '../../lib/index';
import { gate } from '../decorator/locked-app';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl, testPrefix } from '../support/test-prefix';

function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

describe('the owner of a lease is the scope that took it plus every scope joined onto it', () => {
  const prefix = testPrefix(__filename);
  let holder: LockApp;
  let rival: LockApp;
  let redis: Redis;

  beforeAll(async () => {
    holder = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 2_000 });
    rival = await createLockApp({ redis: redisUrl(), keyPrefix: prefix });
    redis = new Redis(redisUrl());
  });
  afterAll(async () => {
    await holder.close();
    await rival.close();
    redis.disconnect();
  });

  it('keeps the key while detached joined work (`void this.audit()`) still runs, so no other instance gets it', async () => {
    const auditStarted = gate();
    const finishAudit = gate();
    let auditDone = false;
    const outer = holder.locks.withLock('order:detached', { reentrant: true }, async () => {
      void holder.locks.withLock('order:detached', { reentrant: true }, async () => {
        auditStarted.open();
        await finishAudit.promise;
        auditDone = true;
      });
      return 'paid';
    });
    await auditStarted.promise;
    // The outer body has returned; the detached audit still runs under the lease.
    expect(await rival.locks.tryAcquire('order:detached')).toBeNull();
    finishAudit.open();
    expect(await outer).toBe('paid');
    expect(auditDone).toBe(true);
    const next = await rival.locks.acquire('order:detached', { waitMs: 5_000 });
    await next.release();
  });

  it('keeps the key for a joined call a Promise.race stopped awaiting', async () => {
    const finishSlow = gate();
    const bodyReturned = gate();
    let slowDone = false;
    const outer = holder.locks.withLock('order:race', { reentrant: true }, async () => {
      const winner = await Promise.race([
        holder.locks.withLock('order:race', { reentrant: true }, async () => {
          await finishSlow.promise;
          slowDone = true;
          return 'slow';
        }),
        Promise.resolve('fast'),
      ]);
      bodyReturned.open();
      return winner;
    });
    await bodyReturned.promise;
    await new Promise((resolve) => setImmediate(resolve));
    // Asked on the holder's own connection, behind any release it could have sent by now.
    expect(await holder.store.inspect('order:race')).not.toBeNull();
    expect(await rival.locks.tryAcquire('order:race')).toBeNull();
    finishSlow.open();
    expect(await outer).toBe('fast');
    expect(slowDone).toBe(true);
    expect(await holder.store.inspect('order:race')).toBeNull();
  });

  it('ends a joined re-entrant call with LeaseLostError when the lease was lost while it ran', async () => {
    let innerResult: unknown;
    const outer = holder.locks.withLock('order:joined-loss', { reentrant: true }, async () => {
      innerResult = await holder.locks
        .withLock('order:joined-loss', { reentrant: true }, async (lease) => {
          await redis.del(`${prefix}order:joined-loss`);
          await aborted(lease.signal);
          return 'looks fine';
        })
        .catch((error: unknown) => error);
    });
    await expect(outer).rejects.toBeInstanceOf(LeaseLostError);
    expect(innerResult).toBeInstanceOf(LeaseLostError);
  });

  it('refuses to join a lease already lost: the call fails instead of running', async () => {
    const body = jest.fn();
    const outer = holder.locks.withLock('order:join-lost', { reentrant: true }, async (lease) => {
      await redis.del(`${prefix}order:join-lost`);
      await aborted(lease.signal);
      return holder.locks.withLock('order:join-lost', { reentrant: true }, body).catch((error: unknown) => error);
    });
    await expect(outer).rejects.toBeInstanceOf(LeaseLostError);
    expect(body).not.toHaveBeenCalled();
  });

  it('makes current() the innermost scope’s own lease, lost or not', async () => {
    let seen: { key: string; aborted: boolean } | undefined;
    let outside: Lease | undefined;
    await holder.locks
      .withLock('account:1', async () => {
        await holder.locks
          .withLock('order:9', async (lease) => {
            await redis.del(`${prefix}order:9`);
            await aborted(lease.signal);
            const current = holder.locks.current()!;
            seen = { key: current.key, aborted: current.signal.aborted };
          })
          .catch(() => undefined);
      })
      .catch(() => undefined);
    expect(seen).toEqual({ key: 'order:9', aborted: true });

    let alone: { key: string; aborted: boolean } | undefined;
    await holder.locks
      .withLock('order:10', async (lease) => {
        await redis.del(`${prefix}order:10`);
        await aborted(lease.signal);
        const current = holder.locks.current();
        alone = current && { key: current.key, aborted: current.signal.aborted };
        // What `current()?.signal.throwIfAborted()` relies on.
        expect(() => holder.locks.current()?.signal.throwIfAborted()).toThrow(LeaseLostError);
      })
      .catch(() => undefined);
    expect(alone).toEqual({ key: 'order:10', aborted: true });
    outside = holder.locks.current();
    expect(outside).toBeUndefined();
  });

  it('lets work a scope scheduled for later (a timer) run after the scope, not inside its released lease', async () => {
    const late = gate<Lease | undefined>();
    await holder.locks.withLock('order:timer', async () => {
      setTimeout(() => late.open(holder.locks.current()), 1);
    });
    expect(await late.promise).toBeUndefined();
  });

  it('lets a scope release its own lease from inside, waiting only for the other scopes under it', async () => {
    const inside = await holder.locks.withLock('order:self-release', async (lease) => {
      await lease.release();
      return holder.store.inspect('order:self-release');
    });
    expect(inside).toBeNull();

    const finishAudit = gate();
    const auditStarted = gate();
    let releasedWhileAuditRan = true;
    const outer = holder.locks.withLock('order:self-release-joined', { reentrant: true }, async () => {
      void holder.locks.withLock('order:self-release-joined', { reentrant: true }, async () => {
        auditStarted.open();
        await finishAudit.promise;
        releasedWhileAuditRan = (await holder.store.inspect('order:self-release-joined')) === null;
      });
      await auditStarted.promise;
      const releasing = holder.locks.current()!.release();
      finishAudit.open();
      await releasing;
      return holder.store.inspect('order:self-release-joined');
    });
    expect(await outer).toBeNull();
    expect(releasedWhileAuditRan).toBe(false);
  });
});

