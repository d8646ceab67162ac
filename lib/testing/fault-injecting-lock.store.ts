import { LockStoreUnavailableError } from '../errors/lock-store-unavailable.error.js';
import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockStore,
  QueuedAcquireOutcome,
  QueuedAcquireRequest,
  RenewOutcome,
  RenewRequest,
} from '../stores/lock-store.interface.js';
import { MemoryLockStore } from '../stores/memory/memory-lock.store.js';
import { Fault, type FaultOptions, type InjectedFault, type LockStoreOperation } from './injected-fault.js';

/**
 * A `LockStore` for tests that passes every call to the store it wraps (the memory store by default) unless
 * a fault injected with {@link fail} covers it: then the call rejects with `LockStoreUnavailableError`, the
 * error a real store gives when its server does not answer. The library under test runs unchanged: no
 * mock of `LockService`, and the lease protocol is the real one. `inner` is the store without faults, for
 * test helpers acting as another instance.
 */
export class FaultInjectingLockStore implements LockStore {
  /** Present when the wrapped store keeps its own queue of waiters, so LockService takes the same path. */
  readonly acquireQueued?: (request: QueuedAcquireRequest) => Promise<QueuedAcquireOutcome>;
  /** The wrapped store's, when it has one: the first attempt is made where it would be. */
  readonly queuesAtOnce?: (key: string) => boolean;
  /** The wrapped store's (see `LockStore.queuesLocalHeads`). */
  readonly queuesLocalHeads?: boolean;
  /** Present when `inner` offers read/write locks and semaphores (see `LockStore.acquireShared`). */
  readonly acquireShared?: LockStore['acquireShared'];
  /** Present when `inner` queues shaped waiters itself (see `LockStore.acquireSharedQueued`). */
  readonly acquireSharedQueued?: LockStore['acquireSharedQueued'];
  /** The wrapped store's, with `acquireSharedQueued`. */
  readonly queuesShape?: LockStore['queuesShape'];
  /** Faults covering new calls. */
  private readonly faults = new Set<Fault>();
  /** Every fault injected since the last restoreAll(), so hung calls are always answered in the end. */
  private readonly injected = new Set<Fault>();

  constructor(
    /** @default new MemoryLockStore() (namespace: this process and the prefix 'lock:') */
    readonly inner: LockStore = new MemoryLockStore(),
  ) {
    const queued = inner.acquireQueued?.bind(inner);
    if (queued) {
      this.acquireQueued = async (request) => {
        await this.check('acquire', request.key);
        return queued(request);
      };
    }
    if (inner.queuesAtOnce) this.queuesAtOnce = inner.queuesAtOnce.bind(inner);
    this.queuesLocalHeads = inner.queuesLocalHeads;
    const shared = inner.acquireShared?.bind(inner);
    if (shared) {
      // Read/write locks and semaphores fail as acquisitions do (a fault on 'acquire' covers them).
      this.acquireShared = async (key, shape, token, leaseMs, holder) => {
        await this.check('acquire', key);
        return shared(key, shape, token, leaseMs, holder);
      };
    }
    const sharedQueued = inner.acquireSharedQueued?.bind(inner);
    if (sharedQueued) {
      this.acquireSharedQueued = async (request, shape) => {
        await this.check('acquire', request.key);
        return sharedQueued(request, shape);
      };
      if (inner.queuesShape) this.queuesShape = inner.queuesShape.bind(inner);
    }
  }

  /** Injects a fault; it lasts until `restore()`, the end of a `using` block, or `times` failed calls. */
  fail(options: FaultOptions = {}): InjectedFault {
    const fault = new Fault(options, this.faults);
    this.injected.add(fault);
    return fault;
  }

  /** Ends every fault in force (hanging calls then reject). */
  restoreAll(): void {
    for (const fault of this.injected) fault.restore();
    this.injected.clear();
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    await this.check('acquire', key);
    return this.inner.acquire(key, token, leaseMs, holder);
  }

  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    await this.check('release', key);
    return this.inner.release(key, token, keepMs);
  }

  /** A fault on one key fails only that key's renewal, as one unreachable shard would; others go through. */
  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    await this.check('renew', undefined);
    const failed = await Promise.all(requests.map((request) => this.failure('renew', request.key)));
    const passed = requests.filter((_, i) => !failed[i]);
    const outcomes = passed.length > 0 ? await this.inner.renew(passed) : [];
    let next = 0;
    return failed.map((error) => error ?? outcomes[next++]!);
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    await this.check('onRelease', key);
    return this.inner.onRelease(key, listener);
  }

  async inspect(key: string): Promise<HeldLock | null> {
    await this.check('inspect', key);
    return this.inner.inspect(key);
  }

  async list(match?: string): Promise<HeldLock[]> {
    await this.check('list', undefined);
    return this.inner.list(match);
  }

  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    await this.check('forceRelease', key);
    return this.inner.forceRelease(key, fencingToken);
  }

  async ping(): Promise<void> {
    await this.check('ping', undefined);
    return this.inner.ping();
  }

  close(): Promise<void> {
    this.restoreAll();
    return this.inner.close();
  }

  private async check(operation: LockStoreOperation, key: string | undefined): Promise<void> {
    const error = await this.failure(operation, key);
    if (error) throw error;
  }

  /** Key-less calls (ping, list, a whole renew batch) are hit only by faults that name no key. */
  private async failure(operation: LockStoreOperation, key: string | undefined): Promise<LockStoreUnavailableError | undefined> {
    for (const fault of this.faults) {
      if (key === undefined && fault.keyed) continue;
      const answered = fault.hit(operation, key);
      if (!answered) continue;
      await answered;
      return new LockStoreUnavailableError(operation, key ?? '*', { cause: new Error('injected fault (FaultInjectingLockStore)') });
    }
    return undefined;
  }
}
