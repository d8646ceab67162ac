import { randomBytes } from 'node:crypto';
import { createZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-client.factory';
import type { ZookeeperLockStore } from '../../lib/stores/zookeeper/zookeeper-lock.store';
import { ZookeeperKeyLayout } from '../../lib/stores/zookeeper/zookeeper-key-layout';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { testPrefix } from '../support/test-prefix';
import { openObserver, pollUntil, type ZookeeperObserver } from './zookeeper-test-support';

const token = (): string => randomBytes(16).toString('base64url');

/**
 * node-zookeeper-client has no container nodes: a lock's parent is persistent, and the store deletes it
 * once a release or a give-up leaves it empty, so distinct keys leave no parents behind.
 */
describe('ZooKeeper store: lock parents do not pile up', () => {
  const prefix = testPrefix(__filename);
  const layout = new ZookeeperKeyLayout(prefix);
  let ensemble: ZookeeperEnsemble;
  let observer: ZookeeperObserver;
  let store: ZookeeperLockStore;
  const parentOf = async (key: string): Promise<boolean> => (await observer.client.exists(layout.lockPath(key))) !== null;

  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
    observer = await openObserver(ensemble);
    store = await createZookeeperLockStore(ensemble.connect, { keyPrefix: prefix, commandTimeoutMs: 5_000, sessionTimeoutMs: 10_000 });
  });
  afterAll(async () => {
    await store?.close();
    await observer?.close();
    await ensemble?.stop();
  });

  it('deletes the parent once the release left it empty, and a later acquire creates it again with a greater token', async () => {
    const first = token();
    const granted = await store.acquire('parent:1', first, 5_000, 'test');
    expect(granted.acquired).toBe(true);
    expect(await parentOf('parent:1')).toBe(true);
    await store.release('parent:1', first, 0);
    await pollUntil(async () => !(await parentOf('parent:1')), 'the empty parent is deleted');

    const again = await store.acquire('parent:1', token(), 5_000, 'test');
    expect(again.acquired && granted.acquired && again.fencingToken > granted.fencingToken).toBe(true);
  });

  it('keeps the parent while a waiter stands in it, and deletes it after the waiter gave up and the holder left', async () => {
    const holder = token();
    await store.acquire('parent:2', holder, 5_000, 'test');
    const waited = await store.acquireQueued({ key: 'parent:2', token: token(), leaseMs: 5_000, holder: 'waiter', deadline: Date.now() + 200 });
    expect(waited.result.acquired).toBe(false);
    expect(await parentOf('parent:2')).toBe(true);
    await store.release('parent:2', holder, 0);
    await pollUntil(async () => !(await parentOf('parent:2')), 'the empty parent is deleted');
  });

  it('leaves no parent behind for a key only watched (onRelease), and still reports its release', async () => {
    let released = 0;
    const stop = await store.onRelease('parent:3', () => released++);
    expect(await parentOf('parent:3')).toBe(false);
    const held = token();
    await store.acquire('parent:3', held, 5_000, 'test');
    await store.release('parent:3', held, 0);
    await pollUntil(async () => released > 0, 'the watch reports the release');
    stop();
    await pollUntil(async () => !(await parentOf('parent:3')), 'the empty parent is deleted');
  });
});
