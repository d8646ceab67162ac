import { MemoryLockStore } from '../../lib/index';
import { createLockApp } from '../support/lock-app';
import { describeLockStoreContract } from './lock-store.contract';
import { describeSharedLockStoreContract } from './shared-lock-store.contract';

describeLockStoreContract('MemoryLockStore', async () => ({ store: new MemoryLockStore({ keyPrefix: 'contract:' }) }));

describeSharedLockStoreContract('MemoryLockStore', async () => ({ store: new MemoryLockStore({ keyPrefix: 'contract:' }) }));

describe('MemoryLockStore namespaces: the process and the key prefix', () => {
  it('makes two applications in one process with the same prefix exclude each other, as two pods on one Redis do', async () => {
    const a = await createLockApp({ store: 'memory', keyPrefix: 'e2e-shared:' });
    const b = await createLockApp({ store: 'memory', keyPrefix: 'e2e-shared:' });
    try {
      const held = await a.locks.acquire('order:1');
      expect(await b.locks.tryAcquire('order:1')).toBeNull();
      const waiting = b.locks.acquire('order:1', { waitMs: 5_000 });
      await held.release();
      const next = await waiting;
      expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
      await next.release();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps different prefixes apart, and a closed application does not take the others’ locks with it', async () => {
    const a = await createLockApp({ store: 'memory', keyPrefix: 'e2e-a:', shutdownGraceMs: 0 });
    const b = await createLockApp({ store: 'memory', keyPrefix: 'e2e-b:' });
    const c = await createLockApp({ store: 'memory', keyPrefix: 'e2e-b:' });
    try {
      const inA = await a.locks.acquire('job');
      const inB = await b.locks.acquire('job');
      await a.close();
      expect(await c.locks.tryAcquire('job')).toBeNull();
      await inB.release();
      expect(inA.held).toBe(false);
    } finally {
      await b.close();
      await c.close();
    }
  });
});
