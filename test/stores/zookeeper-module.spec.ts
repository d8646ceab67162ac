import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { LockConfigError, LockStoreUnavailableError, type LockModuleOptions } from '../../lib/index';
import { createZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-client.factory';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { createLockApp } from '../support/lock-app';
import { moduleStartError } from '../support/module-start';
import { runShapedMethods } from '../support/shaped-methods-app';
import { testPrefix } from '../support/test-prefix';
import { openObserver, queueOf } from './zookeeper-test-support';

describe("store: 'zookeeper' in the module", () => {
  let ensemble: ZookeeperEnsemble;
  beforeAll(async () => {
    // Sessions between 1 s and 20 s: what leaseMs may be.
    ensemble = await startZookeeperEnsemble({ minSessionMs: 1_000, maxSessionMs: 20_000 });
  });
  afterAll(() => ensemble.stop());

  it.each([
    ['missing', undefined],
    ['a Redis URL', 'redis://127.0.0.1:6379'],
    ['an empty list', []],
    ['a bare host', 'localhost'],
    ['a list with a URL', ['127.0.0.1:2181', 'http://127.0.0.1:2181']],
    ['a number', 2181],
  ])('rejects a zookeeper option that is %s at startup, with LockConfigError naming it', async (_, zookeeper) => {
    const error = await moduleStartError({ store: 'zookeeper', zookeeper } as LockModuleOptions);
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as LockConfigError).option).toBe('zookeeper');
  });

  it('refuses a zookeeper option while another store is chosen', async () => {
    const error = await moduleStartError({ store: 'postgres', postgres: 'postgres://127.0.0.1/x', zookeeper: ensemble.connect } as LockModuleOptions);
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as LockConfigError).option).toBe('zookeeper');
  });

  it.each([500, 30_000])('refuses leaseMs %i, outside the sessions the server grants, at startup, every time', async (leaseMs) => {
    for (let i = 0; i < 2; i++) {
      const error = await moduleStartError({ store: 'zookeeper', zookeeper: ensemble.connect, leaseMs, keyPrefix: testPrefix(__filename) });
      expect(error).toBeInstanceOf(LockConfigError);
      expect((error as LockConfigError).option).toBe('leaseMs');
      expect((error as Error).message).toContain(ensemble.members[0]!.address);
    }
  });

  it('locks through LockService with leaseMs as the session timeout, and closes with the application', async () => {
    const app = await createLockApp({ store: 'zookeeper', zookeeper: ensemble.connect, leaseMs: 5_000, keyPrefix: testPrefix(__filename) });
    try {
      const first = await app.locks.withLock('order:1', async (lease) => {
        expect(await app.store.inspect('order:1')).toMatchObject({ fencingToken: lease.fencingToken, ttlMs: 5_000 });
        return lease.fencingToken;
      });
      const second = await app.locks.withLock('order:1', async (lease) => lease.fencingToken);
      expect(second).toBeGreaterThan(first);
      // A per-call lease outside the server's bounds is refused the same way, at the call.
      await expect(app.locks.acquire('order:2', { leaseMs: 500 })).rejects.toBeInstanceOf(LockConfigError);
    } finally {
      await app.close();
    }
  });

  it('starts an application whose locked methods read, write and take permits on ZooKeeper, and runs them', async () => {
    const keyPrefix = testPrefix(`${__filename}:shapes`);
    const observer = await openObserver(ensemble);
    try {
      await runShapedMethods({ store: 'zookeeper', zookeeper: ensemble.connect, leaseMs: 5_000, keyPrefix }, async () =>
        expect(await queueOf(observer, keyPrefix, 'report:1')).toEqual([]),
      );
    } finally {
      await observer.close();
    }
  });

  it('fails closed when no server answers, naming the key and the servers, and still closes', async () => {
    const store = await createZookeeperLockStore('127.0.0.1:1', { keyPrefix: testPrefix(__filename), commandTimeoutMs: 300 });
    const error = await store.acquire('order:9', 'token', 5_000, 'test').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(LockStoreUnavailableError);
    expect((error as Error).message).toBe('Lock store failed during acquire of "order:9": ZooKeeper at 127.0.0.1:1: no session within 300 ms');
    await expect(store.ping()).rejects.toBeInstanceOf(LockStoreUnavailableError);
    await store.close();
  });

  it('loads the node-zookeeper-client package only when an application uses the ZooKeeper store', () => {
    const script = `
      const loaded = () => Object.keys(require.cache).some((file) => file.includes('/node_modules/node-zookeeper-client/'));
      const lib = require(${JSON.stringify(join(__dirname, '../../lib/index.ts'))});
      const before = loaded();
      const { createZookeeperLockStore } = require(${JSON.stringify(join(__dirname, '../../lib/stores/zookeeper/zookeeper-client.factory.ts'))});
      createZookeeperLockStore('127.0.0.1:1', { keyPrefix: 'x:', commandTimeoutMs: 100 })
        .then((store) => store.close())
        .then(() => console.log(JSON.stringify({ before, after: loaded(), exported: typeof lib.DistributedLockModule })));
    `;
    const output = execFileSync(process.execPath, ['-r', join(__dirname, '../support/register-ts.cjs'), '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(output.trim().split('\n').pop()!)).toEqual({ before: false, after: true, exported: 'function' });
  });
});
