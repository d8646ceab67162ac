import { encodeKeySegment } from '../../lib/index';
import { freePort } from '../../scripts/servers/redis-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { runbookCli } from '../support/runbook-cli';
import { redisUrl, testPrefix } from '../support/test-prefix';

describe('runbook CLI', () => {
  const prefix = testPrefix(__filename);
  let app: LockApp;
  let elsewhere: string;

  beforeAll(async () => {
    app = await createLockApp({ redis: redisUrl(), keyPrefix: prefix, holder: 'pod-b', leaseMs: 10_000 });
    elsewhere = `redis://127.0.0.1:${await freePort()}`;
  });
  afterAll(() => app.close());

  it('takes --redis=URL and --prefix=P as well as --redis URL --prefix P', async () => {
    const lease = await app.locks.acquire('equals-form');
    const spaced = await runbookCli(['inspect', 'equals-form', '--redis', redisUrl(), '--prefix', prefix], { REDIS_URL: elsewhere });
    const joined = await runbookCli(['inspect', 'equals-form', `--redis=${redisUrl()}`, `--prefix=${prefix}`], { REDIS_URL: elsewhere });
    for (const result of [spaced, joined]) {
      expect(result).toMatchObject({ code: 0 });
      expect(result.stdout).toContain(`equals-form\tholder=pod-b\tfencing=${lease.fencingToken}`);
    }
    await lease.release();
  });

  it('lists each reader and each permit holder on a line of its own, named by its shape', async () => {
    const readers = [await app.locks.acquire('report', { mode: 'read' }), await app.locks.acquire('report', { mode: 'read' })];
    const permit = await app.locks.acquire('partner', { permits: 5 });
    const result = await runbookCli(['list', '--redis', redisUrl(), '--prefix', prefix]);
    expect(result).toMatchObject({ code: 0 });
    for (const lease of readers) expect(result.stdout).toContain(`report\tread\tholder=pod-b\tfencing=${lease.fencingToken}`);
    expect(result.stdout).toContain(`partner\tpermits\tholder=pod-b\tfencing=${permit.fencingToken}`);
    await Promise.all([...readers, permit].map((lease) => lease.release()));
  });

  it.each([
    [['list', '--redis', 'x', '--prefx', 'lock:']],
    [['list', '--reddis=redis://127.0.0.1:6379']],
    [['list', '--confirm=yes', '--redis', 'redis://127.0.0.1:6379']],
    [['list', '--redis']],
    [['inspect', '--redis', 'redis://127.0.0.1:6379']],
    [['frobnicate', '--redis', 'redis://127.0.0.1:6379']],
    [['inspect', 'a', '--fencing-token', '7', '--redis', 'redis://127.0.0.1:6379']],
    [['force-release', 'a', '--fencing-token', 'abc', '--confirm', '--redis', 'redis://127.0.0.1:6379']],
  ])('rejects %j with the usage text and exit code 2, before touching any server', async (args) => {
    const result = await runbookCli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: nestjs-distributed-lock');
  });

  it('refuses an etcd endpoint with credentials before connecting, without printing the password', async () => {
    const result = await runbookCli(['list', '--etcd', 'http://127.0.0.1:2379,http://root:SECRET@127.0.0.1:2380']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"--etcd"');
    expect(result.stderr).toContain('http://127.0.0.1:2379, ***');
    expect(result.stderr).not.toContain('SECRET');
  });

  it.each([
    ['a Sentinel URL', 'redis+sentinel://:SECRET@127.0.0.1:26379/mymaster', /"--redis" = "\*\*\*".*Sentinel.*SENTINEL GET-MASTER-ADDR-BY-NAME/],
    ['several nodes in one URL', 'redis://:SECRET@10.0.0.1:6379,10.0.0.2:6379', /"--redis" = "\*\*\*".*one node.*any node of a Cluster/],
  ])('refuses %s before connecting, pointing at the URL it takes, without printing the password', async (_, url, message) => {
    const result = await runbookCli(['list', '--redis', url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/SECRET|10\.0\.0/);
  });

  it('finds a key typed as the user wrote it, and lists both the stored and the decoded form', async () => {
    const id = 'EU:42/ä';
    const lease = await app.locks.acquire(`order:${encodeKeySegment(id)}`);
    expect(lease.key).toBe('order:EU%3A42%2F%C3%A4');
    const inspected = await runbookCli(['inspect', `order:${id}`, `--redis=${redisUrl()}`, `--prefix=${prefix}`]);
    expect(inspected.stdout).toContain(`order:EU%3A42%2F%C3%A4 (order:EU:42/ä)\tholder=pod-b\tfencing=${lease.fencingToken}`);
    const listed = await runbookCli(['list', 'order:EU:*', `--redis=${redisUrl()}`, `--prefix=${prefix}`]);
    expect(listed.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^order:EU%3A42%2F%C3%A4 \(order:EU:42\/ä\)\tholder=pod-b\t/)]);
    const released = await runbookCli(['force-release', `order:${id}`, '--confirm', `--redis=${redisUrl()}`, `--prefix=${prefix}`]);
    expect(released.stdout).toContain('released order:EU%3A42%2F%C3%A4');
    expect(await app.store.inspect(lease.key)).toBeNull();
    await expect(lease.release()).rejects.toMatchObject({ code: 'LEASE_LOST' });
  });

  it('prints every control and format character of a decoded key escaped (C1 controls, bidi overrides)', async () => {
    const lease = await app.locks.acquire(`note:${encodeKeySegment('a\u0085b\u009B2J\u202Ec\u2028d')}`);
    const listed = await runbookCli(['list', 'note:*', `--redis=${redisUrl()}`, `--prefix=${prefix}`]);
    expect(listed.stdout).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/);
    expect(listed.stdout).toContain('(note:a\\u0085b\\u009b2J\\u202ec\\u2028d)');
    await lease.release();
  });

  it('says which form of a key a glob matched: a user-form glob also meets values that contain its separator', async () => {
    const own = await app.locks.acquire('tenant:A:1');
    const other = await app.locks.acquire(`tenant:${encodeKeySegment('A:evil')}:2`);
    const listed = await runbookCli(['list', 'tenant:A:*', `--redis=${redisUrl()}`, `--prefix=${prefix}`]);
    const lines = listed.stdout.trim().split('\n');
    // By stored key, as every listing is.
    expect(lines).toEqual([
      expect.stringMatching(/^tenant:A%3Aevil:2 \(tenant:A:evil:2\)\tholder=pod-b\t.*\tmatched=decoded$/),
      expect.stringMatching(/^tenant:A:1\tholder=pod-b\t.*\tmatched=stored$/),
    ]);
    await own.release();
    await other.release();
  });

  it('force-releases with --fencing-token only the grant the operator saw, and refuses a newer holder', async () => {
    const old = await app.locks.acquire('handed-over');
    await old.release();
    const current = await app.locks.acquire('handed-over');
    const args = ['force-release', 'handed-over', '--confirm', `--redis=${redisUrl()}`, `--prefix=${prefix}`];
    const refused = await runbookCli([...args, `--fencing-token=${old.fencingToken}`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is held under fencing token ${current.fencingToken} by pod-b, not ${old.fencingToken}`);
    expect(refused.stderr).toContain('somebody took it over since you looked');
    // A token above every grant so far was never this key's: the message says so, not "taken over".
    const mistyped = await runbookCli([...args, `--fencing-token=${current.fencingToken + 1}`]);
    expect(mistyped.code).toBe(1);
    expect(mistyped.stderr).toContain('newer than any grant of it so far: check the token you typed');
    expect(mistyped.stderr).not.toContain('took it over');
    expect(await app.store.inspect('handed-over')).toMatchObject({ fencingToken: current.fencingToken });
    const taken = await runbookCli([...args, '--fencing-token', String(current.fencingToken)]);
    expect(taken).toMatchObject({ code: 0 });
    expect(taken.stdout).toContain(`released handed-over (was holder=pod-b fencing=${current.fencingToken})`);
    await expect(current.release()).rejects.toMatchObject({ code: 'LEASE_LOST' });
  });

  it('reports a refused connection with the server and the reason, once, without ioredis’ unhandled error events', async () => {
    const result = await runbookCli(['list', '--redis', `redis://user:secret@${elsewhere.slice('redis://'.length)}`]);
    expect(result.code).toBe(1);
    const address = elsewhere.slice('redis://'.length);
    expect(result.stderr).toContain(`${address} is unreachable (connect ECONNREFUSED ${address})`);
    expect(result.stderr).not.toContain('Unhandled error event');
    expect(result.stderr).not.toContain('secret');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});
