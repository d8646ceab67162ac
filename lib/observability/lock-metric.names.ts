/**
 * Names of every instrument and attribute, in one place: OpenTelemetry has no convention for locks, so
 * they live under one prefix, `distributed_lock.`, and follow the general rules (durations in seconds,
 * counts as `{unit}` annotations, attribute values from small fixed sets). docs/observability.md lists them.
 */
export const LOCK_INSTRUMENTATION_SCOPE = 'nestjs-distributed-lock';

export const METRIC = {
  acquireDuration: 'distributed_lock.acquire.duration',
  acquireAttempts: 'distributed_lock.acquire.attempts',
  acquireWakeUps: 'distributed_lock.acquire.wake_ups',
  held: 'distributed_lock.held',
  heldMaxDuration: 'distributed_lock.held.max_duration',
  holdDuration: 'distributed_lock.hold.duration',
  renewDuration: 'distributed_lock.renew.duration',
  renewOverdue: 'distributed_lock.renew.overdue',
  lost: 'distributed_lock.lost',
  releaseDeferred: 'distributed_lock.release.deferred',
  staleWrites: 'distributed_lock.fencing.stale_writes',
} as const;

export const ATTRIBUTE = {
  name: 'distributed_lock.name',
  store: 'distributed_lock.store',
  /** 'read', 'write' or 'permits', on the series of read/write locks and semaphores only. */
  shape: 'distributed_lock.shape',
  permits: 'distributed_lock.permits',
  key: 'distributed_lock.key',
  acquireOutcome: 'distributed_lock.acquire.outcome',
  wakeUpCause: 'distributed_lock.wake_up.cause',
  holdOutcome: 'distributed_lock.hold.outcome',
  renewOutcome: 'distributed_lock.renew.outcome',
  lostReason: 'distributed_lock.lost.reason',
  fencingResource: 'distributed_lock.fencing.resource',
  fencingHelper: 'distributed_lock.fencing.helper',
  fencingToken: 'distributed_lock.fencing_token',
  tokenDigest: 'distributed_lock.token_digest',
  attempts: 'distributed_lock.acquire.attempts',
} as const;

export const SPAN = {
  acquire: 'distributed_lock.acquire',
  hold: 'distributed_lock.hold',
} as const;

/** The bucket advice of `db.client.operation.duration`: a store round trip or a wait, in seconds. */
export const DURATION_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];

/** Holds run the protected work, which for cron jobs takes minutes: the same advice, continued to an hour. */
export const HOLD_BUCKETS: readonly number[] = [...DURATION_BUCKETS, 30, 60, 300, 900, 3600];

/** Store calls per acquisition: 1 uncontended, a few under contention, many in a retry storm. */
export const ATTEMPT_BUCKETS: readonly number[] = [1, 2, 3, 5, 10, 20, 50, 100];
