import { EventEmitter } from 'node:events';
import { processWide } from '../../support/process-wide.js';
import { globToRegExp } from '../key-glob.js';
import { assertOwnershipToken } from '../ownership-token.js';
import type { AcquireResult, ForceReleaseResult, HeldLock, LockShape, LockStore, RenewOutcome, RenewRequest } from '../lock-store.interface.js';
import { MemorySharedHolds } from './memory-shared-holds.js';

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
  /** Read/write locks and semaphores; a key is either here or in `entries`, never both. */
  readonly shared: MemorySharedHolds;
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
    const created: MemoryNamespace = {
      entries: new Map(),
      releases: new EventEmitter().setMaxListeners(0),
      // Same hybrid clock as the Redis store, so tokens look alike whichever store issued them.
      shared: new MemorySharedHolds((now) => (created.lastFencingToken = Math.max(created.lastFencingToken + 1, now * 1000))),
      lastFencingToken: 0,
      acquisitions: 0,
    };
    namespace = created;
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
    const sharedUntil = ns.shared.heldUntil(key, now);
    if (sharedUntil !== undefined) return { acquired: false, ttlMs: sharedUntil - now };
    const fencingToken = Math.max(ns.lastFencingToken + 1, now * 1000);
    ns.lastFencingToken = fencingToken;
    ns.entries.set(key, { token, fencingToken, holder, expiresAt: now + leaseMs });
    return { acquired: true, fencingToken };
  }

  /** Read/write locks and semaphores (see memory-shared-holds.ts); a plain hold of the key turns every shape away. */
  async acquireShared(key: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    if (++this.namespace.acquisitions % SWEEP_EVERY === 0) this.sweep();
    const now = Date.now();
    const plain = this.live(key, now);
    if (plain) return { acquired: false, ttlMs: plain.expiresAt - now };
    return this.namespace.shared.acquire(key, shape, token, leaseMs, holder, now);
  }

  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    const now = Date.now();
    const entry = this.live(key, now);
    if (entry?.token !== token) {
      const released = this.namespace.shared.release(key, token, keepMs, now);
      if (released && keepMs <= 0) this.namespace.releases.emit(key);
      return released ?? false;
    }
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
      if (entry?.token !== token) return this.namespace.shared.renew(key, token, leaseMs, now);
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
    return entry ? describe(key, entry, now) : (this.namespace.shared.describe(key, now)[0] ?? null);
  }

  async list(match = '*'): Promise<HeldLock[]> {
    const pattern = globToRegExp(match);
    const now = Date.now();
    const held: HeldLock[] = [];
    for (const key of [...this.namespace.entries.keys()]) {
      const entry = this.live(key, now);
      if (entry && pattern.test(key)) held.push(describe(key, entry, now));
    }
    for (const key of [...this.namespace.shared.keys()]) if (pattern.test(key)) held.push(...this.namespace.shared.describe(key, now));
    return held.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    const now = Date.now();
    const entry = this.live(key, now);
    if (!entry) return this.forceReleaseShared(key, fencingToken, now);
    const lock = describe(key, entry, now);
    if (fencingToken !== undefined && entry.fencingToken !== fencingToken) {
      return { released: false, reason: 'fencing-mismatch', current: lock };
    }
    this.namespace.entries.delete(key);
    this.namespace.releases.emit(key);
    return { released: true, lock };
  }

  /** Every hold of a shared key, or (with `fencingToken`) the one hold under that token. */
  private forceReleaseShared(key: string, fencingToken: number | undefined, now: number): ForceReleaseResult {
    const holds = this.namespace.shared.describe(key, now);
    const lock = fencingToken === undefined ? holds[0] : holds.find((hold) => hold.fencingToken === fencingToken);
    if (!lock) return holds[0] ? { released: false, reason: 'fencing-mismatch', current: holds[0] } : { released: false, reason: 'not-held' };
    if (fencingToken === undefined) this.namespace.shared.delete(key);
    else this.namespace.shared.dropHold(key, fencingToken, now);
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
    for (const key of [...this.namespace.shared.keys()]) this.namespace.shared.live(key, now);
  }
}

function describe(key: string, entry: MemoryEntry, now: number): HeldLock {
  return { key, fencingToken: entry.fencingToken, holder: entry.holder, ttlMs: entry.expiresAt - now };
}
