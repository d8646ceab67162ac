import { EventEmitter } from 'node:events';
import { processWide } from '../../support/process-wide.js';
import { globToRegExp } from '../key-glob.js';
import { assertOwnershipToken } from '../ownership-token.js';
import type { AcquireResult, ForceReleaseResult, HeldLock, LockStore, RenewOutcome, RenewRequest } from '../lock-store.interface.js';

interface MemoryEntry {
  readonly token: string;
  readonly fencingToken: number;
  readonly holder: string;
  expiresAt: number;
}

/** Everything one key prefix holds in this process: what a Redis server holds under that prefix. */
interface MemoryNamespace {
  readonly entries: Map<string, MemoryEntry>;
  readonly releases: EventEmitter;
  lastFencingToken: number;
  acquisitions: number;
}

/** Expired entries are swept every this many acquisitions, so abandoned keys cannot pile up. */
const SWEEP_EVERY = 1024;

/**
 * Namespaces by key prefix, for the whole process (and shared by the CommonJS and ESM copies of this
 * package): two Nest applications in one process stand for two instances in users' e2e tests, and must
 * exclude each other exactly as two pods on one Redis do. One namespace per prefix ever used, each bounded
 * by its sweep.
 */
const namespaces = processWide('memory-namespaces', () => new Map<string, MemoryNamespace>());

function namespaceOf(keyPrefix: string): MemoryNamespace {
  let namespace = namespaces.get(keyPrefix);
  if (!namespace) {
    namespace = { entries: new Map(), releases: new EventEmitter().setMaxListeners(0), lastFencingToken: 0, acquisitions: 0 };
    namespaces.set(keyPrefix, namespace);
  }
  return namespace;
}

export interface MemoryLockStoreOptions {
  /**
   * The namespace: stores of one process with the same prefix share their locks, as apps sharing one Redis
   * and prefix do; different prefixes never see each other.
   * @default 'lock:'
   */
  readonly keyPrefix?: string;
}

/**
 * The lease protocol inside one process: for users' unit and e2e tests and single-instance deployments. It
 * keeps the Redis store's contract (TTLs, token checks, fencing, minimum hold, release wake-ups), and its
 * namespace is the process and the key prefix: two applications in one process exclude each other, two
 * processes do not.
 */
export class MemoryLockStore implements LockStore {
  private readonly namespace: MemoryNamespace;
  private readonly listeners = new Set<[string, () => void]>();

  constructor(options: MemoryLockStoreOptions = {}) {
    this.namespace = namespaceOf(options.keyPrefix ?? 'lock:');
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    const ns = this.namespace;
    if (++ns.acquisitions % SWEEP_EVERY === 0) this.sweep();
    const now = Date.now();
    const current = this.live(key, now);
    if (current?.token === token) return { acquired: true, fencingToken: current.fencingToken };
    if (current) return { acquired: false, ttlMs: current.expiresAt - now };
    // Same hybrid clock as the Redis store, so tokens look alike whichever store issued them.
    const fencingToken = Math.max(ns.lastFencingToken + 1, now * 1000);
    ns.lastFencingToken = fencingToken;
    ns.entries.set(key, { token, fencingToken, holder, expiresAt: now + leaseMs });
    return { acquired: true, fencingToken };
  }

  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    const now = Date.now();
    const entry = this.live(key, now);
    if (entry?.token !== token) return false;
    if (keepMs > 0) {
      entry.expiresAt = now + keepMs;
      return true;
    }
    this.namespace.entries.delete(key);
    this.namespace.releases.emit(key);
    return true;
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    const now = Date.now();
    return requests.map(({ key, token, leaseMs }) => {
      const entry = this.live(key, now);
      if (entry?.token !== token) return false;
      entry.expiresAt = now + leaseMs;
      return true;
    });
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    const entry: [string, () => void] = [key, listener];
    this.listeners.add(entry);
    this.namespace.releases.on(key, listener);
    return () => {
      this.listeners.delete(entry);
      this.namespace.releases.off(key, listener);
    };
  }

  async inspect(key: string): Promise<HeldLock | null> {
    const now = Date.now();
    const entry = this.live(key, now);
    return entry ? describe(key, entry, now) : null;
  }

  async list(match = '*'): Promise<HeldLock[]> {
    const pattern = globToRegExp(match);
    const now = Date.now();
    const held: HeldLock[] = [];
    for (const key of [...this.namespace.entries.keys()]) {
      const entry = this.live(key, now);
      if (entry && pattern.test(key)) held.push(describe(key, entry, now));
    }
    return held.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    const now = Date.now();
    const entry = this.live(key, now);
    if (!entry) return { released: false, reason: 'not-held' };
    const lock = describe(key, entry, now);
    if (fencingToken !== undefined && entry.fencingToken !== fencingToken) {
      return { released: false, reason: 'fencing-mismatch', current: lock };
    }
    this.namespace.entries.delete(key);
    this.namespace.releases.emit(key);
    return { released: true, lock };
  }

  async ping(): Promise<void> {}

  /** Stops this store's listeners; the namespace's locks belong to every store sharing it and stay. */
  async close(): Promise<void> {
    for (const [key, listener] of this.listeners) this.namespace.releases.off(key, listener);
    this.listeners.clear();
  }

  private live(key: string, now: number): MemoryEntry | undefined {
    const entry = this.namespace.entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.namespace.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.namespace.entries) if (entry.expiresAt <= now) this.namespace.entries.delete(key);
  }
}

function describe(key: string, entry: MemoryEntry, now: number): HeldLock {
  return { key, fencingToken: entry.fencingToken, holder: entry.holder, ttlMs: entry.expiresAt - now };
}
