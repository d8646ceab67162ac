import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { commandCalls } from '../support/command-stats';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';

describe('the leases of several keys held together', () => {
  const prefix = testPrefix(__filename);
  let server: RedisServer;
  let app: LockApp;
  let redis: Redis;

  beforeAll(async () => {
    // A private server, so INFO commandstats counts this file's commands only.
    server = await startRedisServer();
    app = await createLockApp({ redis: server.url, keyPrefix: prefix, leaseMs: 300 });
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    await app.close();
    redis.disconnect();
    await server.stop();
  });

  it('are renewed by the one watchdog in shared batched calls, each key its own lease', async () => {
    const KEYS = 20;
    const ROUNDS = 4;
    const keys = Array.from({ length: KEYS }, (_, i) => `set:${i}`);
    const before = await commandCalls(redis);
    const set = await app.locks.acquire(keys);
    await new Promise<void>((resolve) => {
      const off = app.events.on('renewed', () => {
        if (app.recorded('renewed').length >= KEYS * ROUNDS) {
          off();
          resolve();
        }
      });
    });
    await set.release();
    const after = await commandCalls(redis);
    const renewed = app.recorded('renewed');
    // Every key was renewed on its own lease...
    expect(new Set(renewed.map((e) => e.key))).toEqual(new Set(keys));
    // ...and EVALSHA counts acquisitions + releases + renew calls: what is left is the renew calls, far
    // fewer than the renewals they carried.
    const renewCalls = (after.evalsha ?? 0) - (before.evalsha ?? 0) - 2 * KEYS;
    expect(renewCalls).toBeGreaterThan(0);
    expect(renewCalls * 10).toBeLessThanOrEqual(renewed.length);
  });
});
