import { Cluster, Redis } from 'ioredis';
import { LockConfigError, LockStoreUnavailableError, type LockModuleOptions } from '../../lib/index';
import { freePort, startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { moduleStartError } from '../support/module-start';
import { TcpProxy } from '../support/tcp-proxy';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { releaseScriptFor } from '../../lib/stores/redis/scripts/release.script';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { redactUrl } from '../../lib/stores/redis/connection/redis-connection.option';

const prefix = testPrefix(__filename);

describe('the redis option is checked at startup', () => {
  it.each<[string, unknown, RegExp]>([
    ['node-redis url form with a bad URL', { url: 'http://user:pw@host' }, /"redis\.url" = "\*\*\*": expected a redis:\/\/ or rediss:\/\/ URL/],
    ['node-redis socket options', { socket: { host: 'redis.internal', port: 6380 } }, /"redis\.socket".*use host, port and tls/],
    ['node-redis database', { host: '127.0.0.1', database: 2 }, /"redis\.database".*use db/],
    ['an ioredis keyPrefix', { host: '127.0.0.1', keyPrefix: 'app:' }, /"redis\.keyPrefix".*module's keyPrefix/],
    ['stringNumbers', { host: '127.0.0.1', stringNumbers: true }, /"redis\.stringNumbers"/],
    ['Sentinel with the failover detector switched off', { sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'm', failoverDetector: false }, /failoverDetector/],
    ['an empty cluster seed list', { cluster: [] }, /"redis\.cluster".*non-empty array/],
    ['a cluster seed that is no address', { cluster: ['redis-1'] }, /"redis\.cluster\[0\]"/],
    ['a keyPrefix in the cluster node options', { cluster: ['127.0.0.1:7000'], redisOptions: { keyPrefix: 'x:' } }, /"redis\.redisOptions\.keyPrefix"/],
  ])('rejects %s with a LockConfigError naming the option', async (_, redis, message) => {
    const error = await moduleStartError({ redis: redis as LockModuleOptions['redis'], keyPrefix: prefix });
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toMatch(message);
  });

  it.each<[string, unknown, RegExp]>([
    ['a comma-separated list of nodes in one URL (a natural Cluster guess)', 'redis://10.0.0.1:6379,10.0.0.2:6379', /"redis" = "\*\*\*".*\{ cluster: \[seed nodes\] \}/],
    ['a Sentinel URL', 'redis+sentinel://127.0.0.1:26379/mymaster', /"redis".*\{ sentinels: \[\{ host, port \}\], name \}/],
    ['a Sentinel URL naming several sentinels', 'redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster', /"redis" = "\*\*\*".*; for Sentinel, give ioredis options: \{ sentinels: \[\{ host, port \}\], name \}\.$/],
    ['a schemeless address with credentials', 'app:p@ss@cache:6379', /"redis" = "\*\*\*"/],
    ['a URL with a leading space', ' redis://app:secret@cache:6379', /"redis" = "\*\*\*"/],
  ])('rejects %s at startup with LockConfigError, printing no part of the value', async (_, redis, message) => {
    const error = await moduleStartError({ redis: redis as string, keyPrefix: prefix });
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toMatch(/p@ss|secret|10\.0\.0/);
  });

  it('names a server by host and port only, whatever its password contains', () => {
    const connection = createRedisConnection({ cluster: ['redis://user:p@ss@127.0.0.1:7000'] });
    try {
      expect(connection.server()).toBe('Redis Cluster (seeds 127.0.0.1:7000)');
      expect(redactUrl('redis://user:p@ss@cache:6379/0')).toBe('redis://***@cache:6379/0');
      expect(redactUrl('redis://cache:6379')).toBe('redis://cache:6379');
      expect(redactUrl('not a url with p@ss')).toBe('***');
    } finally {
      void connection.close();
    }
  });

  it.each<[string, Partial<LockModuleOptions>, RegExp]>([
    ['a negative replicas count', { redis: 'redis://127.0.0.1:6379', replicas: -1 }, /"replicas" = -1/],
    ['a fractional replicas count', { redis: 'redis://127.0.0.1:6379', replicas: 1.5 }, /"replicas"/],
    ['shardedPubSub that is not a boolean', { redis: 'redis://127.0.0.1:6379', shardedPubSub: 'yes' as never }, /"shardedPubSub"/],
    ['replicas with the memory store', { store: 'memory', replicas: 1 }, /"replicas" = 1: expected only with store 'redis'/],
  ])('rejects %s at startup', async (_, options, message) => {
    const error = await moduleStartError({ keyPrefix: prefix, ...options });
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toMatch(message);
  });

  it('rejects a handed-in client with keyPrefix or stringNumbers, and a Sentinel client without failoverDetector', async () => {
    const clients = [
      new Redis(redisUrl(), { lazyConnect: true, keyPrefix: 'app:' }),
      new Redis(redisUrl(), { lazyConnect: true, stringNumbers: true }),
      new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true, keyPrefix: 'app:' }),
      new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true, redisOptions: { stringNumbers: true } }),
      new Redis({ lazyConnect: true, sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'm' }),
    ];
    try {
      for (const client of clients) {
        const error = await moduleStartError({ redis: client, keyPrefix: prefix });
        expect(error).toBeInstanceOf(LockConfigError);
        expect((error as Error).message).toMatch(/keyPrefix|stringNumbers|failoverDetector/);
      }
    } finally {
      for (const client of clients) client.disconnect();
    }
  });

  it('connects { url, ...options } to that URL, not to localhost:6379', async () => {
    const server = await startRedisServer();
    const app = await createLockApp({ redis: { url: server.url, connectionName: 'url-form' }, keyPrefix: prefix });
    const probe = new Redis(server.url);
    try {
      const lease = await app.locks.acquire('url-form', { waitMs: 0 });
      expect(await probe.exists(`${prefix}url-form`)).toBe(1);
      await lease.release();
    } finally {
      await app.close();
      probe.disconnect();
      await server.stop();
    }
  });
});

describe('store failures name the server and the cause', () => {
  it('says which server refused the connection and why, not "Reached the max retries per request limit", and never the password', async () => {
    const port = await freePort();
    const app = await createLockApp({ redis: `redis://app:s3cret@127.0.0.1:${port}`, keyPrefix: prefix });
    try {
      const error = await app.locks.acquire('refused', { waitMs: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreUnavailableError);
      const text = `${(error as Error).message} ${String((error as Error).cause)}`;
      expect(text).toContain(`127.0.0.1:${port} is unreachable (connect ECONNREFUSED 127.0.0.1:${port})`);
      expect(text).not.toMatch(/max retries|s3cret/);
    } finally {
      await app.close();
    }
  });

  it('says which server did not answer in time', async () => {
    const server = await startRedisServer();
    const app = await createLockApp({ redis: server.url, keyPrefix: prefix, commandTimeoutMs: 200 });
    try {
      await app.locks.withLock('warm-up', () => undefined);
      server.pause();
      const error = await app.locks.acquire('stalled', { waitMs: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreUnavailableError);
      expect((error as Error).message).toContain(`127.0.0.1:${server.port} did not answer within 200 ms`);
    } finally {
      server.resume();
      await app.close();
      await server.stop();
    }
  });
});

describe('connection edges', () => {
  it('locks through a client built with enableOfflineQueue: false on its first acquire and right after a reconnect', async () => {
    const client = new Redis(redisUrl(), { enableOfflineQueue: false, lazyConnect: true });
    client.on('error', () => undefined);
    const admin = new Redis(redisUrl());
    const app = await createLockApp({ redis: client, keyPrefix: prefix });
    try {
      await (await app.locks.acquire('offline-off', { waitMs: 0 })).release();
      const closed = new Promise((resolve) => client.once('close', resolve));
      await admin.call('CLIENT', 'KILL', 'ID', String(await client.call('CLIENT', 'ID')));
      await closed;
      await (await app.locks.acquire('offline-off', { waitMs: 0 })).release();
    } finally {
      await app.close();
      client.disconnect();
      admin.disconnect();
    }
  });

  it('treats a primary demoted to a replica under a held lease as loss of certainty: renewals unknown, no grant there', async () => {
    const [demoted, other] = await Promise.all([startRedisServer(), startRedisServer()]);
    const app = await createLockApp({ redis: demoted.url, keyPrefix: prefix, leaseMs: 600, commandTimeoutMs: 300 });
    const admin = new Redis(demoted.url);
    try {
      const lease = await app.locks.acquire('demoted', { waitMs: 0 });
      const lost = app.next('lost', (e) => e.key === 'demoted');
      await admin.call('REPLICAOF', '127.0.0.1', String(other.port));
      const refused = await app.locks.acquire('elsewhere', { waitMs: 0 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(LockStoreUnavailableError);
      expect(String((refused as Error).cause)).toMatch(/READONLY/);
      // Never "renewed" by a replica: the lease runs out at its local deadline.
      expect(await lost).toMatchObject({ reason: expect.stringMatching(/expired|rejected/) });
      expect(app.recorded('renewed').filter((e) => e.key === 'demoted' && e.expiresAt > lease.expiresAt)).toEqual([]);
    } finally {
      await app.close();
      admin.disconnect();
      await Promise.all([demoted.stop(), other.stop()]);
    }
  });

  it('closes the application although Redis stopped answering (SIGSTOP), with a lease still held', async () => {
    const server: RedisServer = await startRedisServer();
    const app: LockApp = await createLockApp({ redis: server.url, keyPrefix: prefix, commandTimeoutMs: 300, shutdownGraceMs: 0 });
    try {
      const lease = await app.locks.acquire('stalled-at-shutdown', { waitMs: 0 });
      server.pause();
      await app.close();
      expect(lease.held).toBe(false);
    } finally {
      server.resume();
      await server.stop();
    }
  });

  it('reports a release whose reply was lost and that ioredis re-sent after reconnecting as unknown, not as a lost lease', async () => {
    const server = await startRedisServer();
    const proxy = await TcpProxy.start(server.port);
    const app = await createLockApp({ redis: proxy.url, keyPrefix: prefix });
    try {
      // Warm-up: the scripts are loaded, so the trapped release really runs (a first EVALSHA would not).
      await app.locks.withLock('warm-up', () => undefined);
      const replyLost = proxy.loseReplyTo((request) => request.includes(releaseScriptFor(false).sha));
      await expect(app.locks.withLock('resent-release', async () => 'done')).resolves.toBe('done');
      await replyLost;
      expect(app.recorded('lost')).toEqual([]);
      const [failed] = app.recorded('release-failed');
      expect(failed?.error).toBeInstanceOf(LockStoreUnavailableError);
      expect(String((failed!.error as Error).cause)).toMatch(/outcome unknown/);
      expect(await app.store.inspect('resent-release')).toBeNull();
    } finally {
      await app.close();
      await proxy.close();
      await server.stop();
    }
  });
});
