/** Every fault the run can inject; each case's menu names the ones that apply to its topology. */
export type FaultKind =
  | 'app-pause' // SIGSTOP of an application, SIGCONT after (sometimes past its lease)
  | 'app-kill' // SIGKILL of an application, a new instance started after
  | 'app-close' // app.close() in the middle of work, then a new application in the same process
  | 'server-pause' // SIGSTOP/SIGCONT of a data server (the primary, a master, an etcd member)
  | 'server-restart' // SIGKILL of a server and a restart (Redis: without persistence, every key gone)
  | 'client-pause' // Redis CLIENT PAUSE ALL
  | 'debug-sleep' // Redis DEBUG SLEEP (the server busy in one command)
  | 'failover' // SENTINEL FAILOVER, or CLUSTER FAILOVER on a replica
  | 'primary-kill' // SIGKILL of the Sentinel primary or a Cluster master (replica promoted)
  | 'slot-migration' // a hot key's slot moved key by key while renewals run
  | 'leader-kill' // SIGKILL of the etcd or ZooKeeper leader, restarted after
  | 'backend-kill' // pg_terminate_backend of the lock store's connections
  | 'proxy-delay' // one application's replies delayed
  | 'proxy-drop' // one application's replies dropped, then its connections cut
  | 'proxy-cut'; // one application's connections cut, reconnections refused

/** One fault of the plan, fully decided by the seed before the run starts. */
export interface PlannedFault {
  /** ms after the workload started; a fault starts no earlier (later when the previous one ran late). */
  readonly at: number;
  readonly kind: FaultKind;
  readonly durationMs: number;
  /** Chooses the target among the candidates present when the fault starts (an app slot, a node). */
  readonly pick: number;
}

/** What an injector reports back once its fault is over and the topology serves again. */
export interface FaultResult {
  readonly target: string;
  /** The fault lifted (SIGCONT sent, pause over, new primary named). */
  readonly end: number;
  /** The topology serves every key again (replica in sync, cluster healthy, member back). */
  readonly recovered: number;
  readonly detail?: string;
}

export type Injector = (fault: PlannedFault) => Promise<FaultResult>;

/**
 * Faults after which a key's lock may be gone from the store while its holder still believes it holds
 * it (asynchronous replication, a restart without persistence): exclusion is then only fencing-backed
 * until the holder's next renewal tells it (see docs/reliability.md).
 */
export const DATA_LOSING_FAULTS: ReadonlySet<string> = new Set(['failover', 'primary-kill', 'server-restart']);
