import { hostname } from 'node:os';

/** The one place defaults live; `resolveLockOptions` fills every unset option from here. */
export const LOCK_MODULE_DEFAULTS = {
  store: 'redis',
  keyPrefix: 'lock:',
  replicas: 0,
  fair: false,
  shardedPubSub: false,
  leaseMs: 30_000,
  waitMs: 5_000,
  commandTimeoutMs: 2_000,
  retryMinDelayMs: 10,
  retryMaxDelayMs: 1_000,
  shutdownGraceMs: 5_000,
  holder: () => `${hostname()}:${process.pid}`,
} as const;
