import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockConfigError, LockStoreUnavailableError } from '../../lib/index';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { startRedisServer } from '../../scripts/servers/redis-server';
import { moduleStartError } from '../support/module-start';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { spinUntil } from '../support/until';

/**
 * `replicas: N` on a server that refuses WAIT (an ACL user without it; a managed service that disables
 * it): the grant script runs, WAIT fails after it. That grant must never stay behind (it did, for the
 * whole lease, because a reply error read as "the script did not run"), and a module configured so is
 * refused at startup, naming the option and the reason.
 */
describe('Redis: replicas where WAIT is refused', () => {
  const prefix = testPrefix(__filename);
  const user = `nowait-${process.pid}`;
  const admin = new Redis(redisUrl());
  const url = redisUrl().replace('redis://', `redis://${user}:secret-pass@`);

  beforeAll(async () => {
    await admin.call('ACL', 'SETUSER', user, 'on', '>secret-pass', '~*', '&*', '+@all', '-wait');
  });
  afterAll(async () => {
    await admin.call('ACL', 'DELUSER', user);
    admin.disconnect();
  });

  it('releases the grant the script made and fails the acquisition with the server’s reason', async () => {
    const store = new RedisLockStore(createRedisConnection(url), { keyPrefix: prefix, commandTimeoutMs: 2_000, replicas: 1 });
    try {
      const failure = await store.acquire('order:1', randomUUID(), 60_000, 'test').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LockStoreUnavailableError);
      expect((failure as Error).message).toMatch(/WAIT/);
      expect((failure as Error).message).not.toContain('secret-pass');
      // Nobody holds the key: the grant was given back, not left for the 60 s lease.
      expect(await admin.exists(`${prefix}order:1`)).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('with fair: true, releases a refused grant too, whether a single attempt made it or a release handed it to a waiter', async () => {
    const holderStore = new RedisLockStore(createRedisConnection(redisUrl()), { keyPrefix: prefix, commandTimeoutMs: 2_000, fair: true });
    const store = new RedisLockStore(createRedisConnection(url), { keyPrefix: prefix, commandTimeoutMs: 2_000, replicas: 1, fair: true });
    const layout = new RedisKeyLayout(prefix);
    try {
      const single = await store.acquire('fair:1', randomUUID(), 60_000, 'test').catch((error: unknown) => error);
      expect(single).toBeInstanceOf(LockStoreUnavailableError);
      expect(String((single as Error).cause)).toMatch(/WAIT was refused .*; the grant was released/);
      expect(await admin.exists(`${prefix}fair:1`)).toBe(0);

      // A waiter in line is handed the key by another client's release: its confirmation's WAIT is refused.
      const holder = randomUUID();
      expect((await holderStore.acquire('fair:2', holder, 60_000, 'holder')).acquired).toBe(true);
      const waiting = store.acquireQueued!({ key: 'fair:2', token: randomUUID(), leaseMs: 60_000, holder: 'test', deadline: Date.now() + 1_500 });
      await spinUntil(async () => (await admin.llen(layout.queueKey(layout.lockKey('fair:2')))) === 1);
      await holderStore.release('fair:2', holder, 0);
      const queued = await waiting.catch((error: unknown) => error);
      expect(queued).toBeInstanceOf(LockStoreUnavailableError);
      expect(String((queued as Error).cause)).toMatch(/the lock was granted to a waiter in line, but WAIT was refused .*; the grant was released/);
      expect(String((queued as Error).cause)).not.toContain('secret-pass');
      expect(await admin.exists(`${prefix}fair:2`)).toBe(0);
    } finally {
      await Promise.all([store.close(), holderStore.close()]);
    }
  });

  it('refuses the module at startup with LockConfigError naming replicas', async () => {
    const started = await moduleStartError({ redis: url, keyPrefix: prefix, replicas: 1 });
    expect(started).toBeInstanceOf(LockConfigError);
    expect((started as LockConfigError).option).toBe('replicas');
    expect((started as Error).message).toMatch(/WAIT/);
    expect((started as Error).message).not.toContain('secret-pass');
  });

  // A reply error is a refusal only when it is one (ERR, NOPERM): BUSY, LOADING, MASTERDOWN and the like
  // are states a server passes through, and a module started then must not be refused for good.
  it('reads a passing reply error (BUSY) as the server unavailable now, not as a refusal of replicas', async () => {
    const server = await startRedisServer();
    const admin = new Redis(server.url);
    const busy = new Redis(server.url);
    const store = new RedisLockStore(createRedisConnection(server.url), { keyPrefix: prefix, commandTimeoutMs: 2_000, replicas: 1 });
    try {
      await store.ping();
      await admin.config('SET', 'busy-reply-threshold', '1');
      // A script that runs until it is killed: every other command is answered BUSY meanwhile.
      const running = busy.eval('while true do end', 0).catch((error: unknown) => error);
      await spinUntil(async () => /^BUSY/.test(String(await admin.ping().catch((error: Error) => error.message))));
      const failure = await store.checkAcknowledgements().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LockStoreUnavailableError);
      expect(failure).not.toBeInstanceOf(LockConfigError);
      expect((failure as Error).message).toMatch(/BUSY/);
      await admin.call('SCRIPT', 'KILL');
      await running;
      await expect(store.checkAcknowledgements()).resolves.toBeUndefined();
    } finally {
      await store.close();
      admin.disconnect();
      busy.disconnect();
      await server.stop();
    }
  });
});
