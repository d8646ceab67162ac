import { LockConfigError } from '../../lib/index';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { moduleStartError } from '../support/module-start';
import { testPrefix } from '../support/test-prefix';

/**
 * Same input, same answer (DESIGN §2.15): whether a `leaseMs` is accepted on etcd depends on the value
 * and the server, never on what the process did before. A stock-timed member (election 1 s) grants no
 * lease shorter than 2 s: 1500 ms rounds up to that and is accepted, always; 1000 ms would be stretched
 * past its own rounding (1 s asked, 2 s given) and is refused, always — at startup when it is the module's.
 */
describe('etcd: whether a leaseMs is accepted does not depend on earlier calls', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let app: LockApp;

  beforeAll(async () => {
    cluster = await startEtcdCluster();
    app = await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, leaseMs: 1_500 });
  });
  afterAll(async () => {
    await app.close();
    await cluster.stop();
  });

  it('keeps accepting the module lease of 1500 ms after a call with 1000 ms was refused', async () => {
    await (await app.locks.acquire('first')).release();
    await expect(app.locks.acquire('short', { leaseMs: 1_000 })).rejects.toBeInstanceOf(LockConfigError);
    await (await app.locks.acquire('after')).release();
    await (await app.locks.acquire('explicit', { leaseMs: 1_500 })).release();
    // And the refused value stays refused.
    await expect(app.locks.acquire('short', { leaseMs: 1_000 })).rejects.toBeInstanceOf(LockConfigError);
  });

  it('refuses a module leaseMs the server would stretch at startup, naming the option', async () => {
    const started = await moduleStartError({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, leaseMs: 1_000 });
    expect(started).toBeInstanceOf(LockConfigError);
    expect((started as LockConfigError).option).toBe('leaseMs');
  });
});
