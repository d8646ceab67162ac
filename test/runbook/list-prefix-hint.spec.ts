import { Redis } from 'ioredis';
import { RedisLockRunbook, type Lease } from '../../lib/index';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { runbookCli } from '../support/runbook-cli';

/**
 * An operator lists with the default prefix (or a typo of the app's) and reads "no held locks" while the
 * application holds dozens under its own prefix. The CLI says where the locks are instead. A private
 * server, so that other test files' prefixes are not in the count.
 */
describe('runbook list: no held locks under the prefix asked, some under others', () => {
  let server: RedisServer;
  let shop: LockApp;
  let jobs: LockApp;
  const leases: Lease[] = [];

  beforeAll(async () => {
    server = await startRedisServer();
    shop = await createLockApp({ redis: server.url, keyPrefix: 'shop:lock:', holder: 'pod-a' });
    jobs = await createLockApp({ redis: server.url, keyPrefix: 'jobs:' });
  });
  afterAll(async () => {
    await Promise.all(leases.splice(0).map((lease) => lease.release()));
    await shop?.close();
    await jobs?.close();
    await server?.stop();
  });

  it('says there is nothing held anywhere when nothing is', async () => {
    const listed = await runbookCli(['list', '--redis', server.url, '--prefix', 'lock:']);
    expect(listed).toMatchObject({ code: 0 });
    expect(listed.stdout.trim()).toBe("no held locks under 'lock:'");
  });

  it('names the prefixes that hold locks and their counts, and suggests the fullest, printing no token', async () => {
    for (const key of ['order:1', 'order:2', 'order:3']) leases.push(await shop.locks.acquire(key));
    leases.push(await jobs.locks.acquire('job:close-expired'));
    const listed = await runbookCli(['list', '--redis', server.url, '--prefix', 'lock:']);
    expect(listed).toMatchObject({ code: 0 });
    expect(listed.stdout.trim()).toBe("no held locks under 'lock:'; 3 held under 'shop:lock:', 1 under 'jobs:' — did you mean --prefix shop:lock:?");
    const raw = new Redis(server.url);
    try {
      for (const lease of leases) {
        const value = (await raw.get(`${lease.key.startsWith('job:') ? 'jobs:' : 'shop:lock:'}${lease.key}`))!;
        const token = value.slice(1, value.indexOf('|'));
        expect(token.length).toBeGreaterThan(8);
        expect(listed.stdout).not.toContain(token);
      }
    } finally {
      raw.disconnect();
    }
  });

  it('says so when a listing under the right prefix finds the locks: no hint then', async () => {
    const listed = await runbookCli(['list', '--redis', server.url, '--prefix', 'shop:lock:']);
    expect(listed.stdout).toContain('order:1\tholder=pod-a');
    expect(listed.stdout).not.toContain('did you mean');
  });

  it('walks a bounded part of the keyspace and says when it stopped before the end', async () => {
    const raw = new Redis(server.url);
    const runbook = new RedisLockRunbook(raw, 'lock:');
    try {
      const pipeline = raw.pipeline();
      for (let i = 0; i < 300; i++) pipeline.set(`unrelated:${i}`, 'x');
      await pipeline.exec();
      const bounded = await runbook.heldUnderOtherPrefixes({ maxKeys: 50 });
      expect(bounded.complete).toBe(false);
      const whole = await runbook.heldUnderOtherPrefixes();
      expect(whole).toEqual({ complete: true, prefixes: [{ prefix: 'shop:lock:', held: 3 }, { prefix: 'jobs:', held: 1 }] });
    } finally {
      raw.disconnect();
    }
  });
});
