import type { TortureCase } from '../cases';

/**
 * The time bounds the checker holds the history to, per case. Every bound is a promise of the library
 * (docs/reliability.md names where each comes from) plus `slackMs`: the run happens on a loaded 2-core box
 * where a process can be starved for hundreds of milliseconds, a timer can fire late and a reply can wait
 * in a socket. The slack only ever makes the checker more lenient; a defect that holds a key for a whole
 * lease or a queue for minutes still stands out by seconds.
 */
export interface Bounds {
  /** Scheduling slack of a loaded machine (TORTURE_SLACK_MS, default 1000). */
  readonly slackMs: number;
  /** The module's commandTimeoutMs in every application. */
  readonly commandTimeoutMs: number;
  /** The longest lease a grant of the case can have (extend() draws from the same lengths). */
  readonly leaseMaxMs: number;
  /**
   * How long the store may hold a lock that no recorded grant explains yet: a grant whose reply is on its
   * way, or a call whose outcome was unknown and whose clean-up runs when the late reply arrives
   * (guarantee 9): one command timeout, plus slack. Counted from when the store answers again.
   */
  readonly orphanMs: number;
  /**
   * Redis queues (the default, and `fair`): a dead waiter stands in line for at most its heartbeat lease (2 s) plus one look of the
   * waiter behind it (a third of it), and a hand-off to it holds the key one more heartbeat. With nobody
   * behind it, the queue's own TTL (5 s from its last look) removes it two heartbeats after its death.
   */
  readonly queueMs: number;
  /**
   * How long a waiting writer's first attempt, turned away, keeps new readers out after its last attempt
   * (`2 × retryMaxDelayMs + commandTimeoutMs`, lib/service/shaped-leases.ts).
   */
  readonly writerMarkMs: number;
  /** How long after a fault recovered the store may still be settling (reconnects, a backlog). */
  readonly recoveryMs: number;
  /** A waiter given a free key wakes within the fallback backoff's cap (1 s) plus slack. */
  readonly wakeMs: number;
  /** Rule (h): backoff wake-ups allowed in a fault-free wait of `waitedMs`. */
  backoffAllowed(waitedMs: number): number;
  /** Waiters stand in a Redis queue: on every Redis topology unless `queue: false` (see {@link queueMs}). */
  readonly queued: boolean;
  /**
   * etcd: leases are whole seconds (a 1.5 s lease lives up to 2 s), and a new leader gives every lease its
   * full TTL again (so that an election cannot expire live leases): a key whose holder let go around a
   * member fault may live one more lease. ZooKeeper's new leader does the same for every session.
   */
  readonly ttlRoundingMs: number;
  readonly ttlRefreshedByFaults: boolean;
}

export const QUEUE_HEARTBEAT_MS = 2_000;
export const COMMAND_TIMEOUT_MS = 1_000;
const RETRY_MAX_DELAY_MS = 1_000;

export function boundsFor(def: TortureCase): Bounds {
  const slackMs = Number(process.env.TORTURE_SLACK_MS ?? 1_000);
  const redis = def.topology === 'redis' || def.topology === 'redis-nowait' || def.topology === 'sentinel' || def.topology === 'cluster';
  const queued = redis && (def.options.fair === true || def.options.queue !== false);
  return {
    slackMs,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    leaseMaxMs: Math.max(...def.leaseMs),
    orphanMs: COMMAND_TIMEOUT_MS + slackMs,
    queueMs: queued ? 2 * QUEUE_HEARTBEAT_MS + QUEUE_HEARTBEAT_MS / 3 + slackMs : 0,
    writerMarkMs: 2 * RETRY_MAX_DELAY_MS + COMMAND_TIMEOUT_MS,
    recoveryMs: 2 * slackMs,
    wakeMs: RETRY_MAX_DELAY_MS + slackMs,
    // A wait subscribed to releases wakes by notification; the backoff timer is a safety net for a missed
    // one. One backoff wake-up per 500 ms of waiting, plus two, is far above a safety net that fires
    // rarely, and far below a poll (the exponential backoff from 10 ms wakes ~15 times in 600 ms).
    backoffAllowed: (waitedMs) => waitedMs / 500 + 2,
    queued,
    ttlRoundingMs: def.topology === 'etcd' ? 1_000 : 0,
    ttlRefreshedByFaults: def.topology === 'etcd' || def.topology === 'zookeeper',
  };
}
