import {
  LockStoreUnavailableError,
  MemoryLockStore,
  type AcquireResult,
  type ForceReleaseResult,
  type HeldLock,
  type LockStore,
  type QueuedAcquireOutcome,
  type QueuedAcquireRequest,
  type RenewOutcome,
  type RenewRequest,
} from '../index.js';

/** The store calls a fault can fail. `close` never fails: `app.close()` must always finish. */
export type LockStoreOperation = 'acquire' | 'release' | 'renew' | 'onRelease' | 'inspect' | 'list' | 'forceRelease' | 'ping';

/** What {@link FaultInjectingLockStore.fail} injects. */
export interface FaultOptions {
  /**
   * Which calls fail.
   * @default 'all'
   */
  readonly operations?: readonly LockStoreOperation[] | 'all';
  /**
   * Only calls about this key (without the prefix); calls that name no key (ping, list) are then spared.
   * @default every key
   */
  readonly key?: string;
  /**
   * Fail this many calls, then heal by itself.
   * @default Infinity (until `restore()`)
   */
  readonly times?: number;
}

/** A fault in force. `using fault = store.fail(…)` restores it at the end of the block. */
export interface InjectedFault extends Disposable {
  /** Calls this fault has failed so far. */
  readonly failures: number;
  /** True until restored or out of `times`. */
  readonly active: boolean;
  /** Ends the fault; idempotent. */
  restore(): void;
}

class Fault implements InjectedFault {
  failures = 0;
  private remaining: number;
  private readonly operations: ReadonlySet<string> | undefined;

  constructor(
    private readonly options: FaultOptions,
    private readonly faults: Set<Fault>,
  ) {
    this.remaining = options.times ?? Infinity;
    this.operations = options.operations === undefined || options.operations === 'all' ? undefined : new Set(options.operations);
    faults.add(this);
  }

  /** Names a key: spares the calls that name none. */
  get keyed(): boolean {
    return this.options.key !== undefined;
  }

  get active(): boolean {
    return this.faults.has(this);
  }

  /** Counts and reports a hit when this fault covers the call. */
  hits(operation: LockStoreOperation, key: string | undefined): boolean {
    if (this.operations && !this.operations.has(operation)) return false;
    if (this.keyed && this.options.key !== key) return false;
    this.failures++;
    if (--this.remaining <= 0) this.restore();
    return true;
  }

  restore(): void {
    this.faults.delete(this);
  }

  [Symbol.dispose](): void {
    this.restore();
  }
}

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
  private readonly faults = new Set<Fault>();

  constructor(
    /** @default new MemoryLockStore() (namespace: this process and the prefix 'lock:') */
    readonly inner: LockStore = new MemoryLockStore(),
  ) {
    const queued = inner.acquireQueued?.bind(inner);
    if (queued) {
      this.acquireQueued = async (request) => {
        this.check('acquire', request.key);
        return queued(request);
      };
    }
  }

  /** Injects a fault; it lasts until `restore()`, the end of a `using` block, or `times` failed calls. */
  fail(options: FaultOptions = {}): InjectedFault {
    return new Fault(options, this.faults);
  }

  /** Ends every fault in force. */
  restoreAll(): void {
    this.faults.clear();
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    this.check('acquire', key);
    return this.inner.acquire(key, token, leaseMs, holder);
  }

  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    this.check('release', key);
    return this.inner.release(key, token, keepMs);
  }

  /** A fault on one key fails only that key's renewal, as one unreachable shard would; others go through. */
  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    this.check('renew', undefined);
    const failed = requests.map((request) => this.failure('renew', request.key));
    const passed = requests.filter((_, i) => !failed[i]);
    const outcomes = passed.length > 0 ? await this.inner.renew(passed) : [];
    let next = 0;
    return failed.map((error) => error ?? outcomes[next++]!);
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    this.check('onRelease', key);
    return this.inner.onRelease(key, listener);
  }

  async inspect(key: string): Promise<HeldLock | null> {
    this.check('inspect', key);
    return this.inner.inspect(key);
  }

  async list(match?: string): Promise<HeldLock[]> {
    this.check('list', undefined);
    return this.inner.list(match);
  }

  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    this.check('forceRelease', key);
    return this.inner.forceRelease(key, fencingToken);
  }

  async ping(): Promise<void> {
    this.check('ping', undefined);
    return this.inner.ping();
  }

  close(): Promise<void> {
    this.faults.clear();
    return this.inner.close();
  }

  private check(operation: LockStoreOperation, key: string | undefined): void {
    const error = this.failure(operation, key);
    if (error) throw error;
  }

  /** Key-less calls (ping, list, a whole renew batch) are hit only by faults that name no key. */
  private failure(operation: LockStoreOperation, key: string | undefined): LockStoreUnavailableError | undefined {
    for (const fault of this.faults) {
      if (key === undefined && fault.keyed) continue;
      if (fault.hits(operation, key)) {
        return new LockStoreUnavailableError(operation, key ?? '*', { cause: new Error('injected fault (FaultInjectingLockStore)') });
      }
    }
    return undefined;
  }
}
