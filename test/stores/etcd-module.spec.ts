import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { LockConfigError, type LockModuleOptions } from '../../lib/index';
import { moduleStartError } from '../support/module-start';


describe("store: 'etcd' in the module", () => {
  it.each([
    ['missing', undefined],
    ['a Redis URL', 'redis://127.0.0.1:6379'],
    ['an empty list', []],
    ['a list with a bare word', ['http://127.0.0.1:2379', 'localhost']],
    ['options without hosts', { dialTimeout: 1_000 }],
    ['a number', 2379],
  ])('rejects an etcd option that is %s at startup, with LockConfigError naming it', async (_, etcd) => {
    const error = await moduleStartError({ store: 'etcd', etcd } as LockModuleOptions);
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as LockConfigError).option).toBe('etcd');
  });

  it('never prints the password of a URL it refuses: a refused string is masked whole, valid endpoints beside it are shown', async () => {
    for (const etcd of ['http://locks:hunter2@127.0.0.1:2379', 'http://127.0.0.1:2379/?password=hunter2', 'etcd://locks:hun/ter2@db']) {
      const error = await moduleStartError({ store: 'etcd', etcd });
      expect(error).toBeInstanceOf(LockConfigError);
      expect((error as Error).message).toContain('"etcd" = "***"');
      expect((error as Error).message).not.toMatch(/hunter2|ter2/);
    }
    const listed = await moduleStartError({ store: 'etcd', etcd: ['http://127.0.0.1:2379', 'http://locks:hunter2@127.0.0.2:2379'] });
    expect((listed as Error).message).toContain('"http://127.0.0.1:2379, ***"');
    expect((listed as Error).message).not.toContain('hunter2');
  });

  it('loads the etcd3 package only when an application uses the etcd store', () => {
    // A fresh process: what the library's entry point pulls in, before and after an etcd store is built.
    const script = `
      const loaded = () => Object.keys(require.cache).some((file) => file.includes('/node_modules/etcd3/'));
      const lib = require(${JSON.stringify(join(__dirname, '../../lib/index.ts'))});
      const before = loaded();
      const { createEtcdLockStore } = require(${JSON.stringify(join(__dirname, '../../lib/stores/etcd/etcd-client.factory.ts'))});
      createEtcdLockStore('http://127.0.0.1:1', { keyPrefix: 'x:', commandTimeoutMs: 100 })
        .then((store) => store.close())
        .then(() => console.log(JSON.stringify({ before, after: loaded(), exported: typeof lib.DistributedLockModule })));
    `;
    const output = execFileSync(process.execPath, ['-r', join(__dirname, '../support/register-ts.cjs'), '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(output.trim().split('\n').pop()!)).toEqual({ before: false, after: true, exported: 'function' });
  });
});
