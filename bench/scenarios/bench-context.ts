import type { Redis } from 'ioredis';
import type { Entrant } from '../adapters/contenders.js';
import type { LockAdapter } from '../adapters/lock-adapter.js';
import type { BenchConfig } from '../bench.config.js';

/** What every scenario gets from the runner. */
export interface BenchContext {
  readonly config: BenchConfig;
  readonly redisUrl: string;
  /** The bench's own connection: INFO, ECHO markers. Never used for locking. */
  readonly admin: Redis;
  /** Unique per run, so that keys never collide with an earlier run on a reused Redis. */
  readonly runId: string;
  log(line: string): void;
}

export interface OpenedEntrant {
  readonly adapter: LockAdapter;
  /** Leases the contender itself reported lost while this adapter was open. */
  readonly lost: () => number;
}

/** Opens an entrant under a key prefix private to this run, scenario and entrant (shared by its instances). */
export async function openEntrant(
  context: BenchContext,
  entrant: Entrant,
  scenario: string,
  lock: { leaseMs: number; waitMs: number } = context.config,
): Promise<OpenedEntrant> {
  let lost = 0;
  const adapter = await entrant.contender.open({
    redisUrl: context.redisUrl,
    keyPrefix: `bench:${context.runId}:${scenario}:${entrant.id}:`,
    leaseMs: lock.leaseMs,
    waitMs: lock.waitMs,
    tuning: entrant.tuning,
    onLost: () => lost++,
  });
  return { adapter, lost: () => lost };
}
