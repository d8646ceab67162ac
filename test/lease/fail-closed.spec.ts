import { LockStoreUnavailableError } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { freePort, startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { testPrefix } from '../support/test-prefix';

describe('fail closed', () => {
  const prefix = testPrefix(__filename);

  it('does not run the protected code when Redis is stopped', async () => {
    const server = await startRedisServer();
    const app = await createLockApp({ redis: server.url, keyPrefix: prefix });
    try {
      await app.locks.withLock('warm-up', async () => undefined);
      await server.stop();
      const body = jest.fn();
      await expect(app.locks.withLock('payment', { waitMs: 0 }, body)).rejects.toBeInstanceOf(LockStoreUnavailableError);
      await expect(app.locks.acquire('payment', { waitMs: 300 })).rejects.toBeInstanceOf(LockStoreUnavailableError);
      expect(body).not.toHaveBeenCalled();
    } finally {
      await app.close();
    }
  });

  it('keeps a waiter with time left retrying through a Redis restart instead of giving up at the first error', async () => {
    const server = await startRedisServer();
    const app = await createLockApp({ redis: server.url, keyPrefix: prefix });
    let restarted: RedisServer | undefined;
    try {
      await app.locks.withLock('warm-up', async () => undefined);
      await server.stop();
      const waiting = app.locks.acquire('through-restart', { waitMs: 30_000 });
      // Redis comes back on the same port only after the waiter has met at least one store error.
      const firstError = await app.locks.acquire('probe', { waitMs: 0 }).catch((error: unknown) => error);
      expect(firstError).toBeInstanceOf(LockStoreUnavailableError);
      restarted = await startRedisServer({ port: server.port });
      const lease = await waiting;
      expect(lease.held).toBe(true);
      expect(app.recorded('acquired').at(-1)).toMatchObject({ key: 'through-restart' });
      expect(app.recorded('acquired').at(-1)!.attempts).toBeGreaterThan(1);
      await lease.release();
    } finally {
      await app.close();
      await restarted?.stop();
    }
  });

  it('reports the store error, not LockNotAcquiredError, when the store stays down until the deadline', async () => {
    const app = await createLockApp({ redis: `redis://127.0.0.1:${await freePort()}`, keyPrefix: prefix, retryMaxDelayMs: 50 });
    try {
      const body = jest.fn();
      const error = await app.locks.withLock('payment', { waitMs: 400 }, body).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreUnavailableError);
      expect(body).not.toHaveBeenCalled();
    } finally {
      await app.close();
    }
  });

  it('does not run the protected code when Redis was never reachable', async () => {
    const app = await createLockApp({ redis: `redis://127.0.0.1:${await freePort()}`, keyPrefix: prefix });
    try {
      const body = jest.fn();
      const error = await app.locks.withLock('payment', { waitMs: 0 }, body).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreUnavailableError);
      expect((error as Error).message).toContain('"payment"');
      expect(body).not.toHaveBeenCalled();
    } finally {
      await app.close();
    }
  });

  describe('when an acquire times out with an unknown outcome', () => {
    let server: RedisServer;
    let app: LockApp;
    beforeAll(async () => {
      server = await startRedisServer();
      app = await createLockApp({ redis: server.url, keyPrefix: prefix, commandTimeoutMs: 200 });
    });
    afterAll(async () => {
      server.resume();
      await app.close();
      await server.stop();
    });

    it('fails the caller and cleans up the key if the acquire did run', async () => {
      await app.locks.withLock('warm-up', async () => undefined);
      server.pause();
      const body = jest.fn();
      await expect(app.locks.withLock('slow', { waitMs: 0 }, body)).rejects.toBeInstanceOf(LockStoreUnavailableError);
      expect(body).not.toHaveBeenCalled();
      server.resume();
      // The queued acquire runs when Redis wakes up, then the token-checked clean-up right behind it.
      const probe = await app.locks.acquire('slow', { waitMs: 30_000 });
      expect(app.recorded('acquired').at(-1)!.key).toBe('slow');
      await probe.release();
    });
  });
});
