import type { AcquireTally } from '../events/acquire-tally.js';
import type { LockEvents } from '../events/lock-events.js';
import type { ResolvedLockOptions } from '../options/lock-module-options.interface.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import { acquireWithin, type FirstAttempt, type WaitOutcome } from './retry-loop.js';
import type { LocalFifo } from './local-fifo.js';
import { newToken } from './ownership-token.js';

/** What one LockService acquires with. */
export interface GrantSource {
  readonly store: LockStore;
  readonly events: LockEvents;
  readonly options: Pick<ResolvedLockOptions, 'holder' | 'retryMinDelayMs' | 'retryMaxDelayMs'>;
  readonly waiters: LocalFifo;
}

export interface GrantRequest {
  readonly key: string;
  readonly leaseMs: number;
  readonly waitMs: number;
  readonly signal: AbortSignal | undefined;
  /** Counts what the acquisition does; its `startedAt` is where `waitMs` counts from. */
  readonly tally: AcquireTally;
}

/**
 * Whether an acquisition makes one plain attempt before any waiting is set up (the caller's fast path):
 * always for a single attempt (`waitMs` 0); for a waiting one when no other caller of this application
 * waits for the key (it would be overtaken: the application's waiters wait in its FIFO, unless every one
 * of them stands in the store's own queue) and the store keeps no queue of its own, or keeps one but did
 * not find the key queued lately (`queuesAtOnce`: its plain attempt takes only a free key; turned away,
 * the acquisition joins the queue).
 */
export function triesFirst(source: GrantSource, key: string, waitMs: number): boolean {
  if (waitMs === 0) return true;
  const { store } = source;
  const localFifo = store.acquireQueued === undefined || store.queuesLocalHeads === true;
  if (localFifo && source.waiters.busy(key)) return false;
  return store.acquireQueued === undefined || store.queuesAtOnce?.(key) === false;
}

/**
 * Asks the store for the key until it is granted or `waitMs` has passed: through the store's own queue
 * when it keeps one (fair across instances), otherwise through this application's FIFO of waiters, whose
 * head retries the store on release notifications. Undefined when the deadline passed in the local queue.
 * `first` is the attempt the caller made already (see {@link triesFirst}); the wait goes on from it.
 */
export async function waitForGrant(source: GrantSource, request: GrantRequest, first?: FirstAttempt): Promise<WaitOutcome | undefined> {
  const { store, events, waiters } = source;
  const { holder, retryMinDelayMs, retryMaxDelayMs } = source.options;
  const { key, leaseMs, waitMs, signal, tally } = request;
  const { startedAt } = tally;
  if (waitMs > 0 && store.acquireQueued) {
    // Where only the application's first waiter stands in the store's queue, the others wait their turn here.
    const leaveLocal = store.queuesLocalHeads ? await waiters.enter(key, startedAt + waitMs, signal) : noLocalQueue;
    if (!leaveLocal) return undefined;
    try {
      const token = newToken();
      const queued = await store.acquireQueued({ key, token, leaseMs, holder, deadline: startedAt + waitMs, signal });
      // After a plain first attempt (see triesFirst), which counted already.
      tally.attempts += queued.attempts;
      if (queued.grantedOn !== undefined) tally.wokenBy(queued.grantedOn);
      const granted = queued.result.acquired ? queued.result : undefined;
      return { granted, token, lastSentAt: queued.leaseStartedAt, grantedTtlMs: queued.grantedTtlMs };
    } finally {
      leaveLocal();
    }
  }
  // One attempt (waitMs 0) never queues; a waiting caller first lets earlier local waiters go.
  const leaveQueue = waitMs === 0 ? () => undefined : await waiters.enter(key, startedAt + waitMs, signal);
  if (!leaveQueue) return undefined;
  try {
    return await acquireWithin({
      waitMs: Math.max(0, startedAt + waitMs - Date.now()),
      retryMinDelayMs,
      retryMaxDelayMs,
      signal,
      tally,
      newToken,
      first,
      attempt: (token) => store.acquire(key, token, leaseMs, holder),
      subscribe: (listener) => store.onRelease(key, listener),
      onContention: (holderTtlMs) => events.emit('contention', () => ({ key, name: tally.name, holderTtlMs })),
    });
  } finally {
    leaveQueue();
  }
}

function noLocalQueue(): void {}
