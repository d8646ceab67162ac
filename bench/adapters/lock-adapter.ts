/** A held lock as every contender exposes it to the scenarios. */
export interface LockHandle {
  /** Gives the lock back; rejects when the contender reports a problem (e.g. the lease was lost). */
  release(): Promise<void>;
}

/** One contender, opened against one Redis with one set of lock settings (like one application instance). */
export interface LockAdapter {
  /** Waits for the lock on `key` (up to the opened `waitMs`), or rejects. */
  acquire(key: string): Promise<LockHandle>;
  /**
   * One locked call with an empty body, in the contender's own call shape, for the scenarios that count
   * whole calls (scenario 2). Callback-style APIs (`withLock`, `using`, decorated methods) give it so that
   * they are not charged for being turned into acquire/release; without it, acquire then release.
   */
  run?(key: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * `defaults`: the contender's documented retry settings. `tuned`: its retry delay at the smallest sensible
 * value (1 ms: a timer cannot sleep less without spinning). Contenders that do not poll have one mode only.
 */
export type RetryTuning = 'defaults' | 'tuned';

export interface AdapterOptions {
  readonly redisUrl: string;
  /** Every key this adapter touches starts with it, so contenders and runs never share a key. */
  readonly keyPrefix: string;
  readonly leaseMs: number;
  /**
   * How long one acquire may wait. The same budget for everybody, expressed in each contender's own terms
   * (timeout, retry count, attempt limit), so that the comparison is about how they wait, not how long.
   */
  readonly waitMs: number;
  readonly tuning: RetryTuning;
  /** Called when the contender itself reports that a held lease was lost. */
  readonly onLost: (key: string) => void;
}

/** `protocol`: this library's store alone, to split its cost into protocol and client path. */
export type ContenderRole = 'floor' | 'protocol' | 'library' | 'alternative';

export interface Contender {
  /** Stable id, used in the JSON results and on the command line (`--only=`). */
  readonly id: string;
  readonly label: string;
  readonly role: ContenderRole;
  /** npm package whose installed version is reported. */
  readonly packageName: string;
  /** How the contender waits for a taken key in each mode it supports, in words, for the report. */
  readonly tunings: Partial<Record<RetryTuning, string>>;
  /** True when held leases are renewed in the background (watchdog scenario). */
  readonly renewsLeases: boolean;
  /** Why it cannot run in this checkout, if it cannot. */
  unavailable?(): string | undefined;
  open(options: AdapterOptions): Promise<LockAdapter>;
}

/** Spreads a total wait budget over attempts spaced `delayMs` apart (for retry-count style settings). */
export function attemptsWithin(waitMs: number, delayMs: number): number {
  return Math.max(1, Math.ceil(waitMs / Math.max(1, delayMs)));
}
