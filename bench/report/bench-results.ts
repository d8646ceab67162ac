import type { RetryTuning } from '../adapters/lock-adapter.js';
import type { BenchConfig } from '../bench.config.js';
import type { ConcurrentRow } from '../scenarios/concurrent.scenario.js';
import type { ContendedRow } from '../scenarios/contended.scenario.js';
import type { CostRow } from '../scenarios/cost.scenario.js';
import type { OverheadRow } from '../scenarios/decorator-overhead.scenario.js';
import type { SequentialRow } from '../scenarios/sequential.scenario.js';
import type { ReplicaAckRow } from '../scenarios/replica-ack.scenario.js';
import type { ShapesRow } from '../scenarios/shapes.scenario.js';
import type { StoresRow } from '../scenarios/stores.scenario.js';
import type { ClusterWatchdogRow, WatchdogRow } from '../scenarios/watchdog.scenario.js';
import type { Environment } from '../support/environment.js';
import type { TargetCheck } from './targets.js';

export interface EntrantInfo {
  readonly id: string;
  readonly label: string;
  readonly role: string;
  readonly tuning: RetryTuning;
  readonly waiting: string;
  readonly packageName: string;
}

/** Everything one run produced: written as JSON, rendered as Markdown. */
export interface BenchResults {
  readonly environment: Environment;
  readonly config: BenchConfig;
  readonly entrants: EntrantInfo[];
  readonly unavailable: { id: string; reason: string }[];
  readonly sequential: SequentialRow[];
  readonly concurrent: ConcurrentRow[];
  readonly contended: ContendedRow[];
  /** Scenario 3's workload on a private Redis Cluster (this library only). */
  readonly clusterContended: ContendedRow[];
  readonly cost: CostRow[];
  readonly watchdog: WatchdogRow[];
  readonly stores: StoresRow[];
  /** Scenario 5 on a private Redis Cluster (this library only). */
  readonly clusterWatchdog?: ClusterWatchdogRow;
  /** Scenario 8: the cost of `replicas: 1`. */
  readonly replicaAck?: ReplicaAckRow;
  /** Scenario 9: multi-key pairs, semaphores and readers against what they replace. */
  readonly shapes: ShapesRow[];
  readonly decoratorOverhead: OverheadRow[];
  readonly targets: TargetCheck[];
  readonly durationSeconds: number;
}
