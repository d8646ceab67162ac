import { Redis } from 'ioredis';
import { RedisLockRunbook } from '../../lib/index';
import { createLockApp, type LockApp } from '../support/lock-app';
import { runbookCli } from '../support/runbook-cli';
import { redisUrl, testPrefix } from '../support/test-prefix';

describe('runbook: list, inspect and force-release held locks', () => {
  const prefix = testPrefix(__filename);
  let app: LockApp;
  let client: Redis;
  let runbook: RedisLockRunbook;

  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, holder: 'pod-a', leaseMs: 3_000 });
    client = new Redis(redisUrl());
    runbook = new RedisLockRunbook(client, prefix);
  });
  afterAll(async () => {
    await app.close();
    client.disconnect();
  });

  it('lists held locks with holder, fencing token and TTL, without the library’s own keys', async () => {
    const a = await app.locks.acquire('report:1');
    const b = await app.locks.acquire('report:2');
    const held = await runbook.list('report:*');
    expect(held.map((lock) => [lock.key, lock.holder, lock.fencingToken])).toEqual([
      ['report:1', 'pod-a', a.fencingToken],
      ['report:2', 'pod-a', b.fencingToken],
    ]);
    expect(held.every((lock) => lock.ttlMs > 0 && lock.ttlMs <= 3_000)).toBe(true);
    expect((await runbook.list()).some((lock) => lock.key.startsWith('#'))).toBe(false);
    await a.release();
    await b.release();
  });

  it('force-releases a held lock: a waiter gets in, and the old holder learns it lost the lease', async () => {
    const stuck = await app.locks.acquire('stuck');
    const lost = app.next('lost', (e) => e.key === 'stuck');
    const waiting = app.locks.tryAcquire('stuck');
    expect(await waiting).toBeNull();
    expect(await runbook.forceRelease('stuck')).toMatchObject({
      released: true,
      lock: { key: 'stuck', fencingToken: stuck.fencingToken, holder: 'pod-a' },
    });
    const next = await app.locks.acquire('stuck', { waitMs: 0, leaseMs: 10_000 });
    expect(await lost).toMatchObject({ reason: 'rejected' });
    expect(stuck.signal.aborted).toBe(true);
    expect(await runbook.inspect('stuck')).toMatchObject({ fencingToken: next.fencingToken });
    await next.release();
    expect(await runbook.forceRelease('stuck')).toEqual({ released: false, reason: 'not-held' });
  });

  it('works from the command line, and refuses to force-release without --confirm', async () => {
    const lease = await app.locks.acquire('cli');
    const cli = (...args: string[]) => runbookCli([...args, '--redis', redisUrl(), '--prefix', prefix]);
    expect((await cli('list')).stdout).toContain(`cli\tholder=pod-a\tfencing=${lease.fencingToken}`);
    const refused = await cli('force-release', 'cli');
    expect(refused).toMatchObject({ code: 2 });
    expect(refused.stderr).toContain('still running');
    expect((await cli('force-release', 'cli', '--confirm')).stdout).toContain('released cli');
    await expect(lease.release()).rejects.toMatchObject({ code: 'LEASE_LOST' });
  });
});
