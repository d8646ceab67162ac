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
  /**
   * `'reject'` answers at once with the error; `'hang'` leaves the call unanswered until the fault is
   * restored (then it rejects), like a server that stopped answering before the command timeout.
   * @default 'reject'
   */
  readonly effect?: 'reject' | 'hang';
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

/** @internal One injected fault; the store asks it about each call. */
export class Fault implements InjectedFault {
  failures = 0;
  private remaining: number;
  private readonly hanging: Array<() => void> = [];
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

  /**
   * Counts a hit when this fault covers the call, and resolves when the call may answer: at once, or for a
   * hanging fault when it is restored. Undefined when the fault does not cover the call.
   */
  hit(operation: LockStoreOperation, key: string | undefined): Promise<void> | undefined {
    if (this.operations && !this.operations.has(operation)) return undefined;
    if (this.keyed && this.options.key !== key) return undefined;
    this.failures++;
    if (this.options.effect !== 'hang') {
      if (--this.remaining <= 0) this.restore();
      return Promise.resolve();
    }
    const answered = new Promise<void>((resolve) => this.hanging.push(resolve));
    // Out of `times`: covers no new call, but the hung ones wait for restore().
    if (--this.remaining <= 0) this.faults.delete(this);
    return answered;
  }

  restore(): void {
    this.faults.delete(this);
    for (const answer of this.hanging.splice(0)) answer();
  }

  [Symbol.dispose](): void {
    this.restore();
  }
}
