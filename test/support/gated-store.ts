import {
  MemoryLockStore,
  type AcquireResult,
  type ForceReleaseResult,
  type HeldLock,
  type LockStore,
  type RenewOutcome,
  type RenewRequest,
} from '../../lib/index';
import { createLockApp, type LockApp } from './lock-app';
import { testPrefix } from './test-prefix';

type Verb = 'acquire' | 'renew' | 'release';

interface Gate {
  readonly matches: (args: unknown[]) => boolean;
  entered: () => void;
  opened: Promise<void>;
}

/** A held store call: `entered` settles when the call arrives, `open()` lets it through to the real store. */
export interface HeldCall {
  readonly entered: Promise<void>;
  open(): void;
}

/**
 * A real store (memory or Redis) whose next call of one verb can be held at the door, to put a race in a
 * known order: which of two calls reaches the store first. It never answers for the store.
 */
export class GatedStore implements LockStore {
  private readonly gates = new Map<Verb, Gate[]>();

  constructor(private readonly inner: LockStore) {}

  /** Holds the next `verb` call whose arguments match, until `open()`. */
  hold(verb: Verb, matches: (args: unknown[]) => boolean = () => true): HeldCall {
    let entered!: () => void;
    let open!: () => void;
    const arrived = new Promise<void>((resolve) => (entered = resolve));
    const gate: Gate = { matches, entered, opened: new Promise<void>((resolve) => (open = resolve)) };
    this.gates.set(verb, [...(this.gates.get(verb) ?? []), gate]);
    return { entered: arrived, open };
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    await this.door('acquire', [key, token, leaseMs, holder]);
    return this.inner.acquire(key, token, leaseMs, holder);
  }

  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    await this.door('release', [key, token, keepMs]);
    return this.inner.release(key, token, keepMs);
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    await this.door('renew', [requests]);
    return this.inner.renew(requests);
  }

  onRelease(key: string, listener: () => void): Promise<() => void> {
    return this.inner.onRelease(key, listener);
  }

  inspect(key: string): Promise<HeldLock | null> {
    return this.inner.inspect(key);
  }

  list(match?: string): Promise<HeldLock[]> {
    return this.inner.list(match);
  }

  forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    return this.inner.forceRelease(key, fencingToken);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private async door(verb: Verb, args: unknown[]): Promise<void> {
    const gates = this.gates.get(verb) ?? [];
    const gate = gates.find((candidate) => candidate.matches(args));
    if (!gate) return;
    gates.splice(gates.indexOf(gate), 1);
    gate.entered();
    await gate.opened;
  }
}

/**
 * A LockService application over a GatedStore around the memory store (lease 3 s), opened before the
 * file's tests and closed after them: for specs that put a store call and the lease's own calls in order.
 */
export function gatedMemoryApp(file: string): { store: GatedStore; app: LockApp } {
  const opened = {} as { store: GatedStore; app: LockApp };
  beforeAll(async () => {
    opened.store = new GatedStore(new MemoryLockStore({ keyPrefix: testPrefix(file) }));
    opened.app = await createLockApp({ store: opened.store, leaseMs: 3_000 });
  });
  afterAll(() => opened.app.close());
  return opened;
}
