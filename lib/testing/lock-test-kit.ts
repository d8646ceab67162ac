import { randomUUID } from 'node:crypto';
import { lockShapeOption } from '../options/lock-shape.option.js';
import { LockConfigError } from '../errors/lock-config.error.js';
import type { LockEventMap, LockEventName, LockLostEvent } from '../events/lock-event.types.js';
import { LockEvents } from '../events/lock-events.js';
import { LockStore, type HeldLock } from '../stores/lock-store.interface.js';
import { FaultInjectingLockStore } from './fault-injecting-lock.store.js';
import type { InjectedFault } from './injected-fault.js';
import { LockEventRecorder, type LockEventMatch, type WaitForEventOptions } from './lock-event-recorder.js';

/** A key held by "another instance": taken through the store with a token of its own, outside any LockService. */
export interface ForeignHold extends AsyncDisposable {
  readonly key: string;
  readonly fencingToken: number;
  readonly holder: string;
  /** Gives the key back (token-checked), waking this application's waiters. Idempotent. */
  release(): Promise<void>;
}

/** Options of {@link LockTestKit.holdFromAnotherInstance}. */
export interface ForeignHoldOptions {
  /**
   * How long the hold lasts if never released: nothing renews it, as nothing renews a crashed pod's lease.
   * @default 60000
   */
  readonly leaseMs?: number;
  /** @default 'another-instance' */
  readonly holder?: string;
  /** Hold the key as a reader or a writer of a read/write lock (`AcquireOptions.mode`). */
  readonly mode?: 'read' | 'write';
  /** Hold one permit of a semaphore of this many (`AcquireOptions.permits`). */
  readonly permits?: number;
}

/** Options of {@link LockTestKit.loseLease}. */
export interface LoseLeaseOptions extends WaitForEventOptions {
  /**
   * Let "another instance" take the key as soon as it is gone, as a real takeover would.
   * @default false
   */
  readonly takeOver?: boolean;
}

/**
 * Test helpers for one application whose lock store is a {@link FaultInjectingLockStore} (what
 * `LockTestingModule.forRoot()` gives it): other instances' holds, store outages, lost leases, and the
 * application's lock events. It acts on the store and watches the events; `LockService` stays the real one.
 */
export class LockTestKit {
  private readonly recorder: LockEventRecorder;
  private readonly holds = new Set<ForeignHold>();

  constructor(
    /** The application's store, with its fault switches. */
    readonly store: FaultInjectingLockStore,
    events: LockEvents,
  ) {
    if (!(store instanceof FaultInjectingLockStore)) {
      throw new LockConfigError(
        'store',
        store,
        'a FaultInjectingLockStore: import LockTestingModule.forRoot(), or override the LockStore provider with one',
      );
    }
    this.recorder = new LockEventRecorder(events);
  }

  /** The kit for an application built without `LockTestingModule` whose `LockStore` was overridden. */
  static of(app: { get<T>(token: unknown, options?: { strict?: boolean }): T }): LockTestKit {
    return new LockTestKit(app.get<FaultInjectingLockStore>(LockStore, { strict: false }), app.get<LockEvents>(LockEvents, { strict: false }));
  }

  /**
   * Takes `key` as another pod would, so this application's locked calls on it wait, then fail with
   * `LockNotAcquiredError` (or skip, or fall back). Rejects if the key is already held.
   */
  async holdFromAnotherInstance(key: string, options: ForeignHoldOptions = {}): Promise<ForeignHold> {
    const { inner } = this.store;
    const token = randomUUID();
    const holder = options.holder ?? 'another-instance';
    const leaseMs = options.leaseMs ?? 60_000;
    const shape = lockShapeOption(options);
    if (shape && !inner.acquireShared) throw new LockConfigError(shape.permits === undefined ? 'mode' : 'permits', shape.permits ?? shape.mode, 'a store with read/write locks and semaphores');
    const result = shape ? await inner.acquireShared!(key, shape, token, leaseMs, holder) : await inner.acquire(key, token, leaseMs, holder);
    if (!result.acquired) {
      throw new LockConfigError('key', key, `a free key (it is held, for ${result.ttlMs} ms more)`);
    }
    let released: Promise<void> | undefined;
    const hold: ForeignHold = {
      key,
      fencingToken: result.fencingToken,
      holder,
      release: () => {
        this.holds.delete(hold);
        released ??= inner.release(key, token, 0).then(() => undefined);
        return released;
      },
      [Symbol.asyncDispose]: () => hold.release(),
    };
    this.holds.add(hold);
    return hold;
  }

  /**
   * Makes acquisitions fail with `LockStoreUnavailableError` (of `key` only, when given) until restored, or
   * for `times` store calls. A waiting acquisition retries store errors until its `waitMs` runs out, so with
   * `times: 1` and time left it succeeds: the blip a failover causes.
   */
  failAcquires(options: { key?: string; times?: number } = {}): InjectedFault {
    return this.store.fail({ operations: ['acquire'], ...options });
  }

  /**
   * The store stops answering altogether: acquisitions, renewals, releases and health checks fail with
   * `LockStoreUnavailableError` until restored. Held leases are then lost once their deadline passes.
   */
  storeOutage(): InjectedFault {
    return this.store.fail({ operations: 'all' });
  }

  /**
   * Takes `key` away from the lease this application holds on it, as expiry during a pause or an operator's
   * force-release would. Resolves with the `lost` event once the watchdog's next renewal found the key
   * gone: by then `lease.signal` has aborted with `LeaseLostError`, and the locked call will end in it.
   */
  async loseLease(key: string, options: LoseLeaseOptions = {}): Promise<LockLostEvent> {
    const held = await this.store.inner.inspect(key);
    if (!held) throw new LockConfigError('key', key, 'a key this application holds (nobody holds it)');
    const lost = this.recorder.next('lost', (e) => e.key === key && e.fencingToken === held.fencingToken, options);
    const removed = await this.store.inner.forceRelease(key, held.fencingToken);
    if (!removed.released) throw new LockConfigError('key', key, 'a key still held (it changed hands meanwhile)');
    if (options.takeOver) await this.holdFromAnotherInstance(key).catch(() => undefined);
    return lost;
  }

  /** What the store holds under `key` (holder, fencing token, TTL), or null. Ignores injected faults. */
  inspect(key: string): Promise<HeldLock | null> {
    return this.store.inner.inspect(key);
  }

  /** The next event of that kind matching `match` (e.g. `{ key: 'order:1' }`); subscribe before causing it. */
  nextEvent<E extends LockEventName>(event: E, match?: LockEventMatch<E>, options?: WaitForEventOptions): Promise<LockEventMap[E]> {
    return this.recorder.next(event, match, options);
  }

  /** Every event of that kind since the kit was created (matching `match`, if given). */
  recorded<E extends LockEventName>(event: E, match?: LockEventMatch<E>): LockEventMap[E][] {
    return this.recorder.recorded(event, match);
  }

  /** Ends every injected fault, releases every foreign hold and forgets the recorded events. */
  async reset(): Promise<void> {
    this.store.restoreAll();
    await Promise.all([...this.holds].map((hold) => hold.release()));
    this.recorder.clear();
  }

  /** Runs before the application's own shutdown, so its leases are released through a healthy store. */
  async onModuleDestroy(): Promise<void> {
    await this.reset();
    this.recorder.stop();
  }
}
