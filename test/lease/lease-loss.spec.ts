import { Redis } from 'ioredis';
import { LeaseLostError, type Lease } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { redisUrl, testPrefix } from '../support/test-prefix';

function aborted(signal: AbortSignal): Promise<unknown> {
  // Lost already (a renewal may have found the key gone before the listener is added): resolve at once.
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

describe('lease loss is visible', () => {
  const prefix = testPrefix(__filename);

  describe('when the key disappears behind our back', () => {
    let app: LockApp;
    let redis: Redis;
    beforeAll(async () => {
      app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 300 });
      redis = new Redis(redisUrl());
    });
    afterAll(async () => {
      await app.close();
      redis.disconnect();
    });

    it('aborts the signal with LeaseLostError and emits "lost" at the next renewal', async () => {
      const lease = await app.locks.acquire('deleted');
      const lost = app.next('lost', (e) => e.key === 'deleted');
      await redis.del(`${prefix}deleted`);
      const reason = await aborted(lease.signal);
      expect(reason).toBeInstanceOf(LeaseLostError);
      expect((reason as LeaseLostError).reason).toBe('rejected');
      expect(await lost).toMatchObject({ key: 'deleted', fencingToken: lease.fencingToken, reason: 'rejected' });
      await expect(lease.release()).rejects.toBe(reason);
    });

    it('ends withLock with LeaseLostError instead of success, carrying the body’s own error as cause', async () => {
      const bodyError = new Error('write failed');
      const call = app.locks.withLock('deleted-2', async (lease) => {
        await redis.del(`${prefix}deleted-2`);
        await aborted(lease.signal);
        throw bodyError;
      });
      const error = await call.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LeaseLostError);
      expect((error as LeaseLostError).cause).toBe(bodyError);

      const quiet = await app.locks
        .withLock('deleted-3', async (lease) => {
          await redis.del(`${prefix}deleted-3`);
          await aborted(lease.signal);
          return 'done';
        })
        .catch((e: unknown) => e);
      expect(quiet).toBeInstanceOf(LeaseLostError);
    });

    it('ends withLock with LeaseLostError when the process was frozen past the lease, before any timer fired', async () => {
      const result = await app.locks
        .withLock('frozen', async () => {
          const until = Date.now() + 600;
          while (Date.now() < until);
          return 'done';
        })
        .catch((e: unknown) => e);
      expect(result).toBeInstanceOf(LeaseLostError);
      expect((result as LeaseLostError).reason).toBe('expired');
    });

    it('ends an `await using` block whose lease was lost with LeaseLostError, and a failing block with SuppressedError', async () => {
      const lostBlock = async (): Promise<string> => {
        await using lease = await app.locks.acquire('manual-lost');
        await redis.del(`${prefix}manual-lost`);
        await aborted(lease.signal);
        return 'looks fine';
      };
      const lost = await lostBlock().catch((e: unknown) => e);
      expect(lost).toBeInstanceOf(LeaseLostError);

      const bodyError = new Error('write failed');
      const failingBlock = async (): Promise<void> => {
        await using lease = await app.locks.acquire('manual-lost-2');
        await redis.del(`${prefix}manual-lost-2`);
        await aborted(lease.signal);
        throw bodyError;
      };
      // Node 20 has no global SuppressedError; TypeScript's downlevelled `await using` raises its own.
      const both = (await failingBlock().catch((e: unknown) => e)) as Error & { error: unknown; suppressed: unknown };
      expect(both.name).toBe('SuppressedError');
      expect(both.error).toBeInstanceOf(LeaseLostError);
      expect(both.suppressed).toBe(bodyError);
    });

    it('ends a manual `await using` scope frozen past its lease with LeaseLostError when the block ends', async () => {
      let lease!: Lease;
      const block = async (): Promise<void> => {
        await using held = await app.locks.acquire('frozen-manual');
        lease = held;
        const until = Date.now() + 600;
        while (Date.now() < until);
      };
      const error = await block().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LeaseLostError);
      expect((lease.signal.reason as LeaseLostError).reason).toBe('expired');
      expect(app.recorded('released').filter((e) => e.key === 'frozen-manual')).toEqual([]);
    });
  });

  describe('when renewals cannot get through before the deadline', () => {
    let server: RedisServer;
    let app: LockApp;
    beforeAll(async () => {
      server = await startRedisServer();
      app = await createLockApp({ redis: server.url, keyPrefix: prefix, leaseMs: 400, commandTimeoutMs: 30_000 });
    });
    afterAll(async () => {
      server.resume();
      await app.close();
      await server.stop();
    });

    it('declares the lease lost at its local deadline while Redis is stalled (SIGSTOP)', async () => {
      const lease = await app.locks.acquire('stalled');
      const lost = app.next('lost', (e) => e.key === 'stalled');
      server.pause();
      const reason = await aborted(lease.signal);
      expect((reason as LeaseLostError).reason).toBe('expired');
      expect(await lost).toMatchObject({ key: 'stalled', reason: 'expired' });
      server.resume();
      await expect(lease.release()).rejects.toBe(reason);
      // The queued renewal and the clean-up release both reach Redis once it answers again: the key goes.
      while ((await app.store.inspect('stalled')) !== null) await new Promise((resolve) => setTimeout(resolve, 20));
    });
  });
});
