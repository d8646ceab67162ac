import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockShape,
  LockStore,
  QueuedAcquireOutcome,
  QueuedAcquireRequest,
  RenewOutcome,
  RenewRequest,
} from '../stores/lock-store.interface.js';

/** A store that grants read/write locks and semaphores. */
export type SharedLockStore = LockStore & Required<Pick<LockStore, 'acquireShared'>>;

/**
 * A store as a LeaseAcquirer of one shape sees it: `acquire` grants in that shape (`acquireShared`), and
 * everything else is the store's own, since a store releases and renews a shaped grant by its token like
 * a plain one. Its waiters queue in the store (`acquireQueued`) where the store keeps a FIFO for that shape
 * (`acquireSharedQueued`, `queuesShape`); otherwise they retry on release notifications, which every
 * shaped release sends.
 */
export class ShapedLockStore implements LockStore {
  /** Present when the store queues waiters of this shape itself (see `LockStore.acquireSharedQueued`). */
  readonly acquireQueued?: (request: QueuedAcquireRequest) => Promise<QueuedAcquireOutcome>;
  /** Present with `acquireQueued`, when the store has it (see `LockStore.queuesAtOnce`). */
  readonly queuesAtOnce?: (key: string) => boolean;

  constructor(
    private readonly store: SharedLockStore,
    private readonly shape: LockShape,
  ) {
    const queued = store.acquireSharedQueued?.bind(store);
    if (queued && store.queuesShape?.(shape) !== false) {
      this.acquireQueued = (request) => queued(request, shape);
      if (store.queuesAtOnce) this.queuesAtOnce = store.queuesAtOnce.bind(store);
    }
  }

  acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    return this.store.acquireShared(key, this.shape, token, leaseMs, holder);
  }

  release(key: string, token: string, keepMs: number): Promise<boolean> {
    return this.store.release(key, token, keepMs);
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    return this.store.renew(requests);
  }

  onRelease(key: string, listener: () => void): Promise<() => void> {
    return this.store.onRelease(key, listener);
  }

  inspect(key: string): Promise<HeldLock | null> {
    return this.store.inspect(key);
  }

  list(match?: string): Promise<HeldLock[]> {
    return this.store.list(match);
  }

  forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    return this.store.forceRelease(key, fencingToken);
  }

  ping(): Promise<void> {
    return this.store.ping();
  }

  /** The store is the application's, closed by its LockService. */
  async close(): Promise<void> {}
}

/** Whether `store` grants read/write locks and semaphores. */
export function offersShapes(store: LockStore): store is SharedLockStore {
  return typeof store.acquireShared === 'function';
}
