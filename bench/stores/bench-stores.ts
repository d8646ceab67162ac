import type { BenchStore } from './bench-store.js';
import { etcdBenchStore } from './etcd.bench-store.js';
import { postgresBenchStore } from './postgres.bench-store.js';
import { redisBenchStore } from './redis.bench-store.js';
import { redlockBenchStore } from './redlock.bench-store.js';
import { zookeeperBenchStore } from './zookeeper.bench-store.js';

/** The stores scenario's rows, in report order; the first is the baseline of the ratios. */
export const BENCH_STORES: readonly BenchStore[] = [
  redisBenchStore,
  postgresBenchStore,
  etcdBenchStore,
  zookeeperBenchStore,
  redlockBenchStore,
];
