import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { retryDelayMs } from '../../support/retry-delay.js';
import { Wake } from '../../support/wake.js';
import type { QueuedAcquireOutcome, QueuedAcquireRequest } from '../lock-store.interface.js';
import type { ZookeeperSession } from './zookeeper-session.js';

/** A contender's place: its node (on its session) and the node's czxid. */
export interface ContenderTicket {
  readonly session: ZookeeperSession;
  readonly path: string;
  readonly czxid: number;
}

/** Where a contender stands: gone (its session ended, or it was force-released), first, or behind `predecessor`. */
export type ContenderPosition = { readonly present: false } | { readonly present: true; readonly predecessor?: string };

/** A contender just created, with its place as read right after (`lookedAt`: when that read was sent). */
export interface JoinedContender {
  readonly ticket: ContenderTicket;
  readonly position: ContenderPosition;
  readonly lookedAt: number;
}

/** The ZooKeeper side of waiting, as the store provides it: store failures as `LockStoreUnavailableError`. */
export interface ZookeeperQueueBackend {
  /** Creates the contender's ephemeral sequential node on the session for its lease length, and reads its place. */
  join(request: QueuedAcquireRequest): Promise<JoinedContender>;
  position(request: QueuedAcquireRequest, ticket: ContenderTicket): Promise<ContenderPosition>;
  /**
   * Sets a one-shot watch on the predecessor (fired by its deletion or a change of its value); false when
   * it is already gone (no watch is left behind then).
   */
  watch(request: QueuedAcquireRequest, ticket: ContenderTicket, predecessor: string, onChange: () => void): Promise<boolean>;
  /** Gives the place up: deletes the node (in the background, retried while its session could keep it). */
  leave(ticket: ContenderTicket): void;
  /** The ticket became the holder: from here on it is a grant of `token`, its lease counted from `startedAt`. */
  granted(request: QueuedAcquireRequest, ticket: ContenderTicket, startedAt: number): void;
}

/** Longest pause between two looks at the queue when no watch fired (in case one was lost with a session). */
const MAX_RECHECK_MS = 5_000;

/**
 * A fair wait in ZooKeeper, after Curator's InterProcessMutex: the contender creates its ephemeral
 * sequential node and watches only the node just before it, so a release wakes exactly the next
 * contender, whichever application it belongs to (FIFO, no herd). When nothing is left before it, it
 * holds the lock, and its node's czxid is the fencing token. It gives up at the deadline or on abort by
 * deleting its node; a crashed contender's node goes with its session. Store errors are retried with
 * backoff until the deadline; a contender whose node vanished (its session expired meanwhile) joins again
 * at the back, on a fresh session.
 */
export async function acquireInZookeeperQueue(request: QueuedAcquireRequest, backend: ZookeeperQueueBackend): Promise<QueuedAcquireOutcome> {
  const { deadline, signal } = request;
  const wake = new Wake();
  let ticket: ContenderTicket | undefined;
  let watched: string | undefined;
  let generation = 0;
  let attempts = 0;
  let failures = 0;
  let quietRechecks = 0;
  let lastError: LockStoreUnavailableError | undefined;
  let granted = false;

  try {
    for (;;) {
      signal?.throwIfAborted();
      // The first pass always runs, however close the deadline: one full attempt, as a plain acquire makes.
      if (attempts > 0 && Date.now() >= deadline) break;
      try {
        let position: ContenderPosition;
        let sentAt: number;
        if (!ticket || ticket.session.ended) {
          attempts++;
          const joined = await backend.join(request);
          ({ ticket, position } = joined);
          sentAt = joined.lookedAt;
          watched = undefined;
        } else {
          sentAt = Date.now();
          attempts++;
          position = await backend.position(request, ticket);
        }
        if (!position.present) {
          backend.leave(ticket);
          ticket = undefined;
          continue;
        }
        if (position.predecessor === undefined) {
          signal?.throwIfAborted();
          granted = true;
          backend.granted(request, ticket, sentAt);
          return { result: { acquired: true, fencingToken: ticket.czxid }, attempts, leaseStartedAt: sentAt };
        }
        failures = 0;
        lastError = undefined;
        const seen = wake.count;
        if (watched !== position.predecessor) {
          const mine = ++generation;
          watched = position.predecessor;
          const fired = (): void => {
            if (mine !== generation) return;
            watched = undefined;
            wake.fire();
          };
          if (!(await backend.watch(request, ticket, position.predecessor, fired))) {
            watched = undefined;
            continue;
          }
        }
        const recheckMs = Math.min(MAX_RECHECK_MS, 500 * 2 ** quietRechecks) * (0.5 + Math.random() / 2);
        await wake.wait(Math.min(deadline, Date.now() + recheckMs), signal);
        quietRechecks = wake.count === seen ? Math.min(quietRechecks + 1, 8) : 0;
      } catch (error) {
        if (!(error instanceof LockStoreUnavailableError)) throw error;
        lastError = error;
        failures++;
        await wake.wait(Math.min(deadline, Date.now() + retryDelayMs(failures)), signal);
      }
    }
    if (lastError) throw lastError;
    return { result: { acquired: false, ttlMs: -1 }, attempts, leaseStartedAt: Date.now() };
  } finally {
    generation++;
    if (!granted && ticket) backend.leave(ticket);
  }
}
