import { EventEmitter } from 'node:events';
import type { AcquireResult, HeldLock, LockStore, RenewRequest } from '../lock-store.interface.js';

interface MemoryEntry {
  readonly token: string;
  readonly fencingToken: number;
  readonly holder: string;
  expiresAt: number;
}

/** Expired entries are swept every this many acquisitions, so abandoned keys cannot pile up. */
const SWEEP_EVERY = 1024;

/**
 * The lease protocol inside one process: for users' unit tests and single-instance deployments. It keeps
 * the Redis store's contract (TTLs, token checks, fencing, minimum hold, release wake-ups) but is not
 * distributed: two processes using it do not exclude each other.
 */
export class MemoryLockStore implements LockStore {
  private readonly entries = new Map<string, MemoryEntry>();
  private readonly releases = new EventEmitter().setMaxListeners(0);
  private lastFencingToken = 0;
  private acquisitions = 0;

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    if (++this.acquisitions % SWEEP_EVERY === 0) this.sweep();
    const now = Date.now();
    const current = this.live(key, now);
    if (current) return { acquired: false, ttlMs: current.expiresAt - now };
    // Same hybrid clock as the Redis store, so tokens look alike whichever store issued them.
    const fencingToken = Math.max(this.lastFencingToken + 1, now * 1000);
    this.lastFencingToken = fencingToken;
    this.entries.set(key, { token, fencingToken, holder, expiresAt: now + leaseMs });
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
    this.entries.delete(key);
    this.releases.emit(key);
    return true;
  }

  async renew(requests: readonly RenewRequest[]): Promise<boolean[]> {
    const now = Date.now();
    return requests.map(({ key, token, leaseMs }) => {
      const entry = this.live(key, now);
      if (entry?.token !== token) return false;
      entry.expiresAt = now + leaseMs;
      return true;
    });
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    this.releases.on(key, listener);
    return () => this.releases.off(key, listener);
  }

  async inspect(key: string): Promise<HeldLock | null> {
    const now = Date.now();
    const entry = this.live(key, now);
    return entry ? { key, fencingToken: entry.fencingToken, holder: entry.holder, ttlMs: entry.expiresAt - now } : null;
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.releases.removeAllListeners();
  }

  private live(key: string, now: number): MemoryEntry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}
