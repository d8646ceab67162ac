import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';
import type { LockShape, QueuedAcquireOutcome, QueuedAcquireRequest } from '../stores/lock-store.interface.js';
import { MemoryLockStore } from '../stores/memory/memory-lock.store.js';
import { FaultInjectingLockStore } from './fault-injecting-lock.store.js';

/** A memory store that says it queues semaphore waiters itself, and grants them as one attempt would. */
class QueuingShapesStore extends MemoryLockStore {
  readonly queued: LockShape[] = [];

  async acquireSharedQueued(request: QueuedAcquireRequest, shape: LockShape): Promise<QueuedAcquireOutcome> {
    this.queued.push(shape);
    const result = await this.acquireShared(request.key, shape, request.token, request.leaseMs, request.holder);
    return { result, attempts: 1, leaseStartedAt: Date.now() };
  }

  queuesShape(shape: LockShape): boolean {
    return shape.permits !== undefined;
  }
}

describe('FaultInjectingLockStore', () => {
  const request = (key: string): QueuedAcquireRequest => ({ key, token: `token-${key}`, leaseMs: 1_000, holder: 'test', deadline: Date.now() + 1_000 });

  it("takes the wrapped store's queue of shaped waiters, so a test sees the path production takes", async () => {
    const inner = new QueuingShapesStore({ keyPrefix: 'fault-shapes:' });
    const store = new FaultInjectingLockStore(inner);
    expect(store.queuesShape?.({ permits: 2 })).toBe(true);
    expect(store.queuesShape?.({ mode: 'read' })).toBe(false);

    const outcome = await store.acquireSharedQueued!(request('a'), { permits: 2 });
    expect(outcome.result.acquired).toBe(true);
    expect(inner.queued).toEqual([{ permits: 2 }]);
    await store.close();
  });

  it('fails a queued shaped acquisition under a fault on acquire, as a store that does not answer would', async () => {
    const inner = new QueuingShapesStore({ keyPrefix: 'fault-shapes-down:' });
    const store = new FaultInjectingLockStore(inner);
    store.fail({ operations: ['acquire'] });
    await expect(store.acquireSharedQueued!(request('b'), { permits: 2 })).rejects.toBeInstanceOf(LockStoreUnavailableError);
    expect(inner.queued).toEqual([]);
    await store.close();
  });

  it('offers no queue of shaped waiters over a store without one', () => {
    const store = new FaultInjectingLockStore(new MemoryLockStore({ keyPrefix: 'fault-plain:' }));
    expect(store.acquireSharedQueued).toBeUndefined();
    expect(store.queuesShape).toBeUndefined();
  });
});
