/** Every knob of one run. `--quick` trades repetitions and durations for a run under a minute. */
export interface BenchConfig {
  readonly mode: 'quick' | 'full';
  /** Lease and wait budget of every lock outside the watchdog scenario. */
  readonly leaseMs: number;
  readonly waitMs: number;
  readonly sequential: { readonly repetitions: number; readonly warmupPairs: number; readonly durationMs: number };
  readonly concurrent: {
    readonly repetitions: number;
    readonly workers: number;
    /** Untimed load before each timed run: JIT warm-up, pipelines filled. */
    readonly warmupMs: number;
    readonly durationMs: number;
  };
  readonly contended: {
    readonly repetitions: number;
    readonly workers: number;
    /** Workers are spread over this many adapter instances, as over application instances (pods). */
    readonly instances: number;
    readonly holdMs: number;
    readonly durationMs: number;
  };
  readonly cost: { readonly pairs: number; readonly contendedMs: number };
  readonly watchdog: {
    readonly repetitions: number;
    readonly leases: number;
    readonly leaseMs: number;
    readonly holdMs: number;
    /** Contender ids measured; others that renew are skipped to keep the run short. */
    readonly contenders: readonly string[];
  };
  /** Scenario 8: `replicas: 0` against `replicas: 1` on a primary with one replica. */
  readonly replicaAck: { readonly repetitions: number; readonly durationMs: number };
  /** Scenario 9: multi-key pairs, semaphores and readers, each against what it replaces. */
  readonly shapes: {
    readonly repetitions: number;
    readonly warmupMs: number;
    readonly durationMs: number;
    /** Multi-key workers on distinct pairs, and readers on one key. */
    readonly workers: number;
    readonly permits: number;
    /** Workers on the semaphore's one key: more than `permits`, so some wait. */
    readonly semaphoreWorkers: number;
    /** Inside time of the contended semaphore's holders, so that they overlap. */
    readonly holdMs: number;
  };
}

const FULL: BenchConfig = {
  mode: 'full',
  leaseMs: 10_000,
  waitMs: 5_000,
  // Many short rounds rather than a few long ones: load on a shared machine changes by the second.
  sequential: { repetitions: 10, warmupPairs: 50, durationMs: 500 },
  concurrent: { repetitions: 10, workers: 64, warmupMs: 100, durationMs: 500 },
  contended: { repetitions: 4, workers: 16, instances: 4, holdMs: 1, durationMs: 3_000 },
  cost: { pairs: 200, contendedMs: 1_000 },
  watchdog: { repetitions: 3, leases: 10_000, leaseMs: 1_500, holdMs: 6_000, contenders: ['lock-service', 'redis-semaphore', 'redlock'] },
  replicaAck: { repetitions: 5, durationMs: 500 },
  shapes: { repetitions: 6, warmupMs: 100, durationMs: 500, workers: 16, permits: 5, semaphoreWorkers: 8, holdMs: 1 },
};

const QUICK: BenchConfig = {
  mode: 'quick',
  leaseMs: 10_000,
  waitMs: 5_000,
  sequential: { repetitions: 5, warmupPairs: 30, durationMs: 150 },
  concurrent: { repetitions: 5, workers: 64, warmupMs: 50, durationMs: 150 },
  contended: { repetitions: 2, workers: 16, instances: 4, holdMs: 1, durationMs: 500 },
  cost: { pairs: 50, contendedMs: 200 },
  watchdog: { repetitions: 1, leases: 10_000, leaseMs: 1_500, holdMs: 1_500, contenders: ['lock-service'] },
  replicaAck: { repetitions: 2, durationMs: 200 },
  shapes: { repetitions: 3, warmupMs: 50, durationMs: 200, workers: 16, permits: 5, semaphoreWorkers: 8, holdMs: 1 },
};

export function benchConfig(quick: boolean): BenchConfig {
  return quick ? QUICK : FULL;
}
