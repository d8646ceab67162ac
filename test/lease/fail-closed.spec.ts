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
      await expect(app.locks.withLock('payment', body)).rejects.toBeInstanceOf(LockStoreUnavailableError);
      await expect(app.locks.acquire('payment')).rejects.toBeInstanceOf(LockStoreUnavailableError);
      expect(body).not.toHaveBeenCalled();
    } finally {
      await app.close();
    }
  });

  it('does not run the protected code when Redis was never reachable', async () => {
    const app = await createLockApp({ redis: `redis://127.0.0.1:${await freePort()}`, keyPrefix: prefix });
    try {
      const body = jest.fn();
      const error = await app.locks.withLock('payment', body).catch((e: unknown) => e);
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
      await expect(app.locks.withLock('slow', body)).rejects.toBeInstanceOf(LockStoreUnavailableError);
      expect(body).not.toHaveBeenCalled();
      server.resume();
      // The queued acquire runs when Redis wakes up, then the token-checked clean-up right behind it.
      const probe = await app.locks.acquire('slow', { waitMs: 30_000 });
      expect(app.recorded('acquired').at(-1)!.key).toBe('slow');
      await probe.release();
    });
  });
});
