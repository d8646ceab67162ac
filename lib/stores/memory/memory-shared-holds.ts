import type { AcquireResult, HeldLock } from '../lock-store.interface.js';
import type { LockShape, LockShapeName } from '../lock-shape.js';
import { lockShapeName } from '../lock-shape.js';

interface SharedHold {
  readonly fencingToken: number;
  readonly holder: string;
  expiresAt: number;
}

/** One key's read/write lock or semaphore: what the Redis store keeps in the key's hash. */
interface SharedEntry {
  mode: LockShapeName;
  readonly holds: Map<string, SharedHold>;
  /** Writers turned away, by token, until when they keep new readers out. */
  readonly waitingWriters: Map<string, number>;
}

/**
 * The read/write locks and semaphores of one memory namespace, with the Redis store's rules (see
 * redis/scripts/shared-acquire.script.ts): readers together while no writer waits, one writer alone,
 * at most N permit holders (N of the granting call), holds whose TTL ran out dropped at the next look.
 * Fencing tokens come from the namespace's one counter (`nextFence`), shared with plain grants.
 */
export class MemorySharedHolds {
  private readonly entries = new Map<string, SharedEntry>();

  constructor(private readonly nextFence: (now: number) => number) {}

  acquire(key: string, shape: LockShape, token: string, leaseMs: number, holder: string, now: number): AcquireResult {
    const entry = this.live(key, now) ?? { mode: lockShapeName(shape), holds: new Map(), waitingWriters: new Map() };
    const mine = entry.holds.get(token);
    if (mine) return { acquired: true, fencingToken: mine.fencingToken };
    const mode = lockShapeName(shape);
    const holders = entry.holds.size;
    const writerWaits = entry.waitingWriters.size > 0;
    const granted =
      holders === 0
        ? mode !== 'read' || !writerWaits
        : entry.mode === mode && (mode === 'read' ? !writerWaits : mode === 'permits' && holders < shape.permits!);
    if (!granted) {
      const waitingMs = Math.min(shape.waitingMs ?? leaseMs, leaseMs);
      if (mode === 'write' && waitingMs > 0) entry.waitingWriters.set(token, now + waitingMs);
      if (entry.holds.size > 0 || entry.waitingWriters.size > 0) this.entries.set(key, entry);
      return { acquired: false, ttlMs: earliest(entry) - now };
    }
    const fencingToken = this.nextFence(now);
    entry.mode = mode;
    entry.holds.set(token, { fencingToken, holder, expiresAt: now + leaseMs });
    entry.waitingWriters.delete(token);
    this.entries.set(key, entry);
    return { acquired: true, fencingToken };
  }

  /** Whether anybody holds `key` in a shape (a plain grant of it waits then), and until when at least. */
  heldUntil(key: string, now: number): number | undefined {
    const entry = this.live(key, now);
    return entry && entry.holds.size > 0 ? earliest(entry) : undefined;
  }

  /** As the store's release: undefined when `token` holds nothing here (the plain entries may know it). */
  release(key: string, token: string, keepMs: number, now: number): boolean | undefined {
    const entry = this.live(key, now);
    const hold = entry?.holds.get(token);
    if (!entry || !hold) return undefined;
    if (keepMs > 0) {
      hold.expiresAt = now + keepMs;
      return true;
    }
    entry.holds.delete(token);
    if (entry.holds.size === 0 && entry.waitingWriters.size === 0) this.entries.delete(key);
    return true;
  }

  renew(key: string, token: string, leaseMs: number, now: number): boolean {
    const hold = this.live(key, now)?.holds.get(token);
    if (!hold) return false;
    hold.expiresAt = now + leaseMs;
    return true;
  }

  /** Every live hold, for the runbook: one line per holder, its shape named. */
  describe(key: string, now: number): HeldLock[] {
    const entry = this.live(key, now);
    if (!entry) return [];
    return [...entry.holds.values()].map((hold) => ({ key, fencingToken: hold.fencingToken, holder: hold.holder, ttlMs: hold.expiresAt - now, shape: entry.mode }));
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** The runbook's override of one hold, named by its fencing token. */
  dropHold(key: string, fencingToken: number, now: number): void {
    const entry = this.live(key, now);
    for (const [token, hold] of entry?.holds ?? []) if (hold.fencingToken === fencingToken) entry!.holds.delete(token);
    this.live(key, now);
  }

  /** Drops what expired; forgets the key once nothing is left. */
  live(key: string, now: number): SharedEntry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    for (const [token, hold] of entry.holds) if (hold.expiresAt <= now) entry.holds.delete(token);
    for (const [token, until] of entry.waitingWriters) if (until <= now) entry.waitingWriters.delete(token);
    if (entry.holds.size === 0 && entry.waitingWriters.size === 0) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}

/** When the next look may find the entry changed: the first hold to end, else the first waiting writer's. */
function earliest(entry: SharedEntry): number {
  let first = Infinity;
  for (const hold of entry.holds.values()) first = Math.min(first, hold.expiresAt);
  if (first === Infinity) for (const until of entry.waitingWriters.values()) first = Math.min(first, until);
  return first;
}
