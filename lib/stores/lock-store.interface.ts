import { Inject } from '@nestjs/common';

/** The store granted the lock; `fencingToken` is greater than every earlier grant for the same key. */
export interface LockGranted {
  readonly acquired: true;
  readonly fencingToken: number;
}

/** Someone else holds the key; `ttlMs` is its remaining lease (-1 when the store cannot tell). */
export interface LockDenied {
  readonly acquired: false;
  readonly ttlMs: number;
}

export type AcquireResult = LockGranted | LockDenied;

export interface RenewRequest {
  readonly key: string;
  readonly token: string;
  readonly leaseMs: number;
}

/** What the store knows about a held key, for the runbook and for tests. */
export interface HeldLock {
  readonly key: string;
  readonly fencingToken: number;
  readonly ttlMs: number;
  readonly holder: string;
}

/**
 * The lease protocol every store implements. Keys are the user's keys (the store adds its prefix);
 * tokens are per-acquisition secrets; every mutating call is token-checked and atomic.
 */
export interface LockStore {
  /** Creates the key with its TTL and issues the fencing token in one atomic step. */
  acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult>;
  /**
   * Deletes the key if `token` still owns it. With `keepMs > 0` the key is kept that much longer instead
   * (minimum hold for cron de-duplication). Returns false when the token no longer owned the key.
   */
  release(key: string, token: string, keepMs: number): Promise<boolean>;
  /** Sets each key's TTL to its `leaseMs` where the token still owns it; one result per request. */
  renew(requests: readonly RenewRequest[]): Promise<boolean[]>;
  /** Calls `listener` whenever `key` is released; resolves once notifications are flowing. */
  onRelease(key: string, listener: () => void): Promise<() => void>;
  inspect(key: string): Promise<HeldLock | null>;
  /** Closes what the store opened; connections handed in by the user stay open. */
  close(): Promise<void>;
}

/** Injection token for the module's {@link LockStore}. */
export const LockStore = Symbol('LockStore');

/** Injects the module's {@link LockStore}. */
export const InjectLockStore = (): ParameterDecorator => Inject(LockStore);
