import type { FaultKind } from './faults/fault-kinds';
import type { OpKind } from './worker/op-plan';
import type { WorkloadKeys } from './worker/worker-config';

/** Which servers a case starts (see topology/). */
export type TopologyKind = 'redis' | 'redis-nowait' | 'sentinel' | 'cluster' | 'postgres' | 'etcd' | 'zookeeper' | 'redlock';

/**
 * What a topology promises about exclusion when a fault loses data: `'fencing'` where a failover to an
 * asynchronous replica (or a restart without persistence) can lose a grant, so that two holders may
 * believe they hold a key until the older one's next renewal, and only the fenced resource keeps them
 * apart; `'strict'` where no fault loses a grant (consensus, a single database).
 */
export type ExclusionPromise = 'strict' | 'fencing';

export interface TortureCase {
  readonly name: string;
  readonly topology: TopologyKind;
  /** Module options of the case on top of the store's connection (`queue`, `fair`, `replicas`). */
  readonly options: Readonly<Record<string, unknown>>;
  /** Lease lengths the workload draws from; the first is the decorated methods'. */
  readonly leaseMs: readonly number[];
  readonly faults: readonly FaultKind[];
  readonly exclusion: ExclusionPromise;
  readonly mix: Readonly<Partial<Record<OpKind, number>>>;
  /** The hot keys carry a hash tag on a Cluster: one slot, one node, one renew batch, one migration. */
  readonly hashTagged?: boolean;
  /**
   * A deployment the library refuses: every application must fail to start with a `LockConfigError`
   * whose message matches, and none may start (then the run has no workload and no faults).
   */
  readonly refusedAtStartup?: RegExp;
}

const APP_FAULTS: readonly FaultKind[] = ['app-pause', 'app-kill', 'app-close'];
const PROXY_FAULTS: readonly FaultKind[] = ['proxy-delay', 'proxy-drop', 'proxy-cut'];
const REDIS_FAULTS: readonly FaultKind[] = [...APP_FAULTS, 'server-pause', 'server-restart', 'client-pause', 'debug-sleep', ...PROXY_FAULTS];
const SENTINEL_FAULTS: readonly FaultKind[] = [...APP_FAULTS, 'failover', 'primary-kill', 'server-pause', 'client-pause'];
const CLUSTER_FAULTS: readonly FaultKind[] = [...APP_FAULTS, 'failover', 'primary-kill', 'server-pause', 'client-pause', 'slot-migration'];

export const MIX: Readonly<Partial<Record<OpKind, number>>> = {
  'with-lock': 3,
  decorated: 2,
  'decorated-skip': 1,
  cron: 1,
  'acquire-using': 2,
  'try-acquire': 2,
  'single-attempt': 1,
  'short-wait': 1,
  'aborted-wait': 1,
  'min-hold': 1,
  'long-hold': 1,
  'multi-hold': 1,
  pair: 1,
};
/**
 * Fair queues are about waiting: more waits in line, and the pair that leaves a queue behind a crash; and
 * readers, writers and permit holders, whose waiters stand in the key's second line (`#shared-queue:`).
 */
const SHAPED_MIX = { read: 3, write: 2, permits: 3 };
const FAIR_MIX = { ...MIX, pair: 5, 'short-wait': 2, ...SHAPED_MIX };
const CLUSTER_MIX = { ...MIX, 'multi-hold': 3, 'long-hold': 2 };
const CLUSTER_FAIR_MIX = { ...CLUSTER_MIX, pair: 3, ...SHAPED_MIX };

export const CASES: readonly TortureCase[] = [
  { name: 'redis', topology: 'redis', options: {}, leaseMs: [3_000, 1_500, 2_500], faults: REDIS_FAULTS, exclusion: 'fencing', mix: MIX },
  // `queue: false`: the race of earlier versions (every instance's first waiter woken by a release).
  { name: 'redis-race', topology: 'redis', options: { queue: false }, leaseMs: [3_000, 1_500, 2_500], faults: REDIS_FAULTS, exclusion: 'fencing', mix: MIX },
  { name: 'redis-fair', topology: 'redis', options: { fair: true }, leaseMs: [4_000, 3_000], faults: REDIS_FAULTS, exclusion: 'fencing', mix: FAIR_MIX },
  // Defect 4: replicas with an ACL user that may not run WAIT. Refused at startup since its fix; on the
  // code before it, every grant stayed held by nobody for its lease.
  {
    name: 'redis-replicas-nowait',
    topology: 'redis-nowait',
    options: {},
    refusedAtStartup: /replicas/,
    leaseMs: [4_000],
    faults: ['app-pause', 'app-kill', 'client-pause'],
    exclusion: 'strict',
    mix: MIX,
  },
  { name: 'sentinel', topology: 'sentinel', options: {}, leaseMs: [3_000, 2_000], faults: SENTINEL_FAULTS, exclusion: 'fencing', mix: MIX },
  { name: 'sentinel-fair', topology: 'sentinel', options: { fair: true }, leaseMs: [4_000, 3_000], faults: SENTINEL_FAULTS, exclusion: 'fencing', mix: FAIR_MIX },
  { name: 'sentinel-replicas', topology: 'sentinel', options: { replicas: 1 }, leaseMs: [3_000, 2_000], faults: SENTINEL_FAULTS, exclusion: 'fencing', mix: MIX },
  // Every grant of the fair queue (a single attempt's, a join's or look's, a hand-off) acknowledged by the replica.
  { name: 'sentinel-fair-replicas', topology: 'sentinel', options: { fair: true, replicas: 1 }, leaseMs: [4_000, 3_000], faults: SENTINEL_FAULTS, exclusion: 'fencing', mix: FAIR_MIX },
  { name: 'cluster', topology: 'cluster', options: {}, leaseMs: [3_000, 2_000], faults: CLUSTER_FAULTS, exclusion: 'fencing', mix: CLUSTER_MIX, hashTagged: true },
  { name: 'cluster-fair', topology: 'cluster', options: { fair: true }, leaseMs: [4_000, 3_000], faults: CLUSTER_FAULTS, exclusion: 'fencing', mix: CLUSTER_FAIR_MIX, hashTagged: true },
  { name: 'cluster-replicas', topology: 'cluster', options: { replicas: 1 }, leaseMs: [3_000, 2_000], faults: CLUSTER_FAULTS, exclusion: 'fencing', mix: CLUSTER_MIX, hashTagged: true },
  {
    name: 'cluster-fair-replicas',
    topology: 'cluster',
    options: { fair: true, replicas: 1 },
    leaseMs: [4_000, 3_000],
    faults: CLUSTER_FAULTS,
    exclusion: 'fencing',
    mix: CLUSTER_FAIR_MIX,
    hashTagged: true,
  },
  {
    name: 'postgres',
    topology: 'postgres',
    options: {},
    leaseMs: [3_000, 1_500],
    faults: [...APP_FAULTS, 'server-pause', 'backend-kill', ...PROXY_FAULTS],
    exclusion: 'strict',
    mix: { ...MIX, transaction: 4 },
  },
  // 1000 and 1500 lie below etcd's 2 s minimum TTL (known defect 5: whether they are accepted depends on
  // what the process did before).
  {
    name: 'etcd',
    topology: 'etcd',
    options: {},
    leaseMs: [3_000, 1_000, 1_500],
    faults: [...APP_FAULTS, 'server-pause', 'server-restart', 'leader-kill', ...PROXY_FAULTS],
    exclusion: 'strict',
    mix: MIX,
  },
  // Three independent masters, a grant on two; a master restarted empty forgets its copies and its counter.
  { name: 'redlock', topology: 'redlock', options: {}, leaseMs: [3_000, 1_500, 2_500], faults: REDIS_FAULTS, exclusion: 'fencing', mix: MIX },
  // A lease is its ZooKeeper session (one per lease length); every wait stands in the ensemble's queue.
  {
    name: 'zookeeper',
    topology: 'zookeeper',
    options: {},
    leaseMs: [3_000, 2_000],
    faults: [...APP_FAULTS, 'server-pause', 'server-restart', 'leader-kill', ...PROXY_FAULTS],
    exclusion: 'strict',
    mix: MIX,
  },
];

export function caseNamed(name: string): TortureCase {
  const found = CASES.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no torture case "${name}"; cases: ${CASES.map((c) => c.name).join(', ')}`);
  return found;
}

export function workloadKeys(def: TortureCase): WorkloadKeys {
  const tagged = (name: string): string => (def.hashTagged ? `{hot}:${name}` : `hot:${name}`);
  return {
    hot: [1, 2, 3].map((i) => tagged(String(i))),
    warmSlots: 3,
    cold: Array.from({ length: 40 }, (_, i) => `cold:${i + 1}`),
    readWrite: [1, 2].map((i) => tagged(`rw${i}`)),
    semaphores: [1, 2].map((i) => tagged(`sem${i}`)),
  };
}
