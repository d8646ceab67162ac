import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisLockRunbook } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { redisUrl } from '../support/test-prefix';

/** The `ACL SETUSER` line of docs/security.md, its continuation lines joined. */
function documentedAcl(): string[] {
  const page = readFileSync(join(__dirname, '../../docs/security.md'), 'utf8');
  const block = /```\n(ACL SETUSER [\s\S]*?)```/.exec(page)![1]!;
  return block.replace(/\\\n/g, ' ').trim().split(/\s+/).slice(2);
}

/**
 * Docs are tests: the Redis ACL docs/security.md recommends is enough for everything the library does —
 * grants, releases, renewals, waits woken by a release, the fair queue, the runbook's listing — and the
 * user it describes can touch nothing outside its prefix.
 */
describe('the Redis ACL of docs/security.md', () => {
  const admin = new Redis(redisUrl());
  const [name, ...rules] = documentedAcl();
  const password = 'long-random-password';
  const url = redisUrl().replace('redis://', `redis://${name}:${password}@`);
  const apps: LockApp[] = [];

  beforeAll(async () => {
    await admin.call('ACL', 'SETUSER', name!, 'reset', ...rules);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await admin.call('ACL', 'DELUSER', name!);
    admin.disconnect();
  });

  it.each([false, true])('lets the library lock with it (fair: %s), and list its locks', async (fair) => {
    const options = { redis: url, keyPrefix: 'shop:lock:', fair, leaseMs: 2_000, renewIntervalMs: 200 };
    const [a, b] = [await createLockApp(options), await createLockApp(options)];
    apps.push(a, b);
    const held = await a.locks.acquire(`acl:${fair}`);
    const waiting = b.locks.acquire(`acl:${fair}`, { waitMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 500)); // a renewal or two under the ACL
    await held.release();
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
    const client = new Redis(url);
    try {
      expect((await new RedisLockRunbook(client, 'shop:lock:').list('acl:*')).map((lock) => lock.key)).toEqual([`acl:${fair}`]);
      await expect(client.set('other:key', '1')).rejects.toThrow(/NOPERM/);
    } finally {
      client.disconnect();
    }
    await next.release();
  });
});
