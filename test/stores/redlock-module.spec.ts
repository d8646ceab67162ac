import { Redis } from 'ioredis';
import { LockConfigError, type LockModuleOptions } from '../../lib/index';
import { createLockApp } from '../support/lock-app';
import { moduleStartError } from '../support/module-start';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { RedlockMasters } from './redlock-test-support';

const url = (port: number): string => `redis://127.0.0.1:${port}`;

describe("store: 'redlock' in the module", () => {
  it.each([
    ['missing', undefined, 'redlock'],
    ['a bare list (not { masters })', [url(1), url(2), url(3)], 'redlock'],
    ['one master', { masters: [url(1)] }, 'redlock.masters'],
    ['an even count', { masters: [url(1), url(2), url(3), url(4)] }, 'redlock.masters'],
    ['a server named twice', { masters: [url(1), url(2), 'redis://127.0.0.1:1/0'] }, 'redlock.masters[2]'],
    ['a server named twice as options', { masters: [url(1), url(2), { host: '127.0.0.1', port: 1 }] }, 'redlock.masters[2]'],
    ['a Cluster as a master', { masters: [url(1), url(2), { cluster: [url(3)] }] }, 'redlock.masters[2].cluster'],
    ['a Sentinel group as a master', { masters: [url(1), url(2), { sentinels: [{ host: 'h', port: 26379 }], name: 'm' }] }, 'redlock.masters[2].sentinels'],
    ['a URL that is not one', { masters: [url(1), url(2), 'localhost:6379'] }, 'redlock.masters[2]'],
    ['an unknown setting', { masters: [url(1), url(2), url(3)], retryCount: 3 }, 'redlock.retryCount'],
  ])('refuses a redlock option that is %s at startup, with LockConfigError naming it', async (_, redlock, option) => {
    for (let i = 0; i < 2; i++) {
      const error = await moduleStartError({ store: 'redlock', redlock } as LockModuleOptions);
      expect(error).toBeInstanceOf(LockConfigError);
      expect((error as LockConfigError).option).toBe(option);
    }
  });

  it('refuses a redlock option while another store is chosen, and fair: true with redlock (no queue)', async () => {
    const foreign = await moduleStartError({ redis: redisUrl(), redlock: { masters: [url(1), url(2), url(3)] } } as LockModuleOptions);
    expect(foreign).toMatchObject({ option: 'redlock' });
    expect((foreign as Error).message).toContain("only with store: 'redlock'");
    const fair = await moduleStartError({ store: 'redlock', redlock: { masters: [url(1), url(2), url(3)] }, fair: true });
    expect(fair).toBeInstanceOf(LockConfigError);
    expect(fair).toMatchObject({ option: 'fair' });
    expect((fair as Error).message).toContain("store is 'redlock': Redlock keeps no queue");
  });

  it('locks through LockService on private masters, reports the store as redlock, and leaves no key after release', async () => {
    const masters = await RedlockMasters.start(3);
    const prefix = testPrefix(__filename);
    const app = await createLockApp({ store: 'redlock', redlock: { masters: masters.urls }, keyPrefix: prefix });
    try {
      expect(app.store.constructor.name).toBe('RedlockLockStore');
      const ran = await app.locks.withLock('invoice:1', async (lease) => lease.fencingToken);
      expect(ran).toBeGreaterThan(0);
      for (let i = 0; i < 3; i++) expect(await masters.ask(i, (redis) => redis.exists(`${prefix}invoice:1`))).toBe(0);
    } finally {
      await app.close();
      await masters.stop();
    }
  });

  it('takes ioredis clients as masters (as the libraries it replaces do) and leaves them open at shutdown', async () => {
    const masters = await RedlockMasters.start(3);
    const clients = masters.urls.map((each) => new Redis(each));
    try {
      const app = await createLockApp({ store: 'redlock', redlock: { masters: clients }, keyPrefix: testPrefix(__filename) });
      expect(await app.locks.withLock('invoice:2', async (lease) => lease.fencingToken)).toBeGreaterThan(0);
      await app.close();
      expect(await Promise.all(clients.map((client) => client.ping()))).toEqual(['PONG', 'PONG', 'PONG']);
    } finally {
      for (const client of clients) client.disconnect();
      await masters.stop();
    }
  });
});
