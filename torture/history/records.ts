/**
 * The recorded history, one NDJSON line per record, every process on the one machine clock (`t`, epoch
 * ms). Application processes write what they did and saw; the parent writes what it did to them and to
 * the servers, and what the sampler found in the store. The checker reads nothing else.
 */

/** Who wrote a record: `a<slot>.<incarnation>` for an application instance, `parent` for the run. */
export type Actor = string;

/** An application process whose module refused the deployment at startup exits with this (EX_CONFIG). */
export const REFUSED_EXIT_CODE = 78;

interface Base {
  readonly t: number;
  readonly p: Actor;
}

/** How an operation ended, as the workload saw it. */
export type OpOutcome =
  | 'ok' // the protected section ran and the lease was given back
  | 'refused' // the key stayed taken: tryAcquire null, LockNotAcquiredError, onLocked 'skip'
  | 'aborted' // the caller's AbortSignal ended the wait
  | 'lost' // LeaseLostError from the call, the release or the disposal
  | 'store' // LockStoreUnavailableError: fail closed
  | 'config' // LockConfigError
  | 'stale' // StaleFencingTokenError from the register: a write refused by its fence
  | 'shutdown' // the application was closing
  | 'unexpected'; // anything else: reported under (f)

export type WorkerRecord = Base &
  (
    | { readonly type: 'proc'; readonly what: 'ready' | 'closing' | 'closed' | 'reopened' | 'stopping' | 'exiting'; readonly ms?: number }
    /** The module refused the deployment at startup (`LockConfigError`): the process exits with {@link REFUSED_EXIT_CODE}. */
    | { readonly type: 'proc'; readonly what: 'refused'; readonly error: string }
    | {
        readonly type: 'op-start';
        readonly op: string;
        readonly kind: string;
        readonly key: string;
        readonly waitMs: number;
        readonly leaseMs: number;
        /** One attempt only (tryAcquire, waitMs 0): a refusal of a free key is a liveness violation. */
        readonly single: boolean;
        /** The second key of an operation that takes two (a multi-hold): it may leave either one behind. */
        readonly key2?: string;
      }
    | { readonly type: 'op-end'; readonly op: string; readonly outcome: OpOutcome; readonly error?: string; readonly option?: string }
    | {
        readonly type: 'grant';
        readonly op: string;
        readonly key: string;
        readonly fence: number;
        readonly digest: string;
        readonly leaseMs: number;
        readonly expiresAt: number;
        readonly minHoldMs: number;
        /** A read/write lock's or a semaphore's hold (absent for a plain lock), and the N of a permit. */
        readonly shape?: 'read' | 'write' | 'permits';
        readonly permits?: number;
      }
    | { readonly type: 'join'; readonly op: string; readonly key: string; readonly fence: number; readonly digest: string }
    | {
        readonly type: 'write';
        readonly op: string;
        readonly key: string;
        readonly fence: number;
        readonly accepted: boolean;
        /** The register's value this section read, and the one it found at the write (equal unless someone wrote between). */
        readonly read: number;
        readonly before: number;
        /** The fence the register held when it refused. */
        readonly stored?: number;
      }
    | { readonly type: 'section-end'; readonly op: string; readonly key: string; readonly digest: string; readonly why?: string }
    | { readonly type: 'extend'; readonly op: string; readonly digest: string; readonly ms: number; readonly ok: boolean; readonly expiresAt: number }
    | { readonly type: 'ev'; readonly ev: string; readonly key: string; readonly [field: string]: unknown }
    | { readonly type: 'unhandled'; readonly error: string }
  );

export interface HeldLockSample {
  readonly key: string;
  readonly fence: number;
  readonly ttlMs: number;
  readonly holder: string;
}

export interface QueueSample {
  readonly key: string;
  /** The key's line of shaped waiters (`#shared-queue:`) rather than its plain one (`#queue:`). */
  readonly shaped?: boolean;
  /** Every entry's heartbeat deadline (epoch ms) and the instance that wrote it. */
  readonly entries: ReadonlyArray<{ readonly deadline: number; readonly holder: string }>;
}

export type ParentRecord = Base &
  (
    | {
        readonly type: 'fault';
        readonly kind: string;
        readonly target: string;
        /** When the fault began and ended (`end`: the fault lifted); `recovered`: the topology serves again. */
        readonly start: number;
        readonly end: number;
        readonly recovered: number;
        readonly detail?: string;
      }
    | { readonly type: 'sample'; readonly start: number; readonly end: number; readonly locks?: HeldLockSample[]; readonly queues?: QueueSample[]; readonly error?: string }
    | {
        readonly type: 'app';
        readonly what: 'spawned' | 'ready' | 'sigstop' | 'sigcont' | 'sigkill' | 'close-asked' | 'stop-asked' | 'exited' | 'stuck';
        readonly label: Actor;
        readonly slot: number;
        readonly pid?: number;
        readonly code?: number | null;
        readonly signal?: string | null;
      }
    | { readonly type: 'run'; readonly what: 'start' | 'workload-start' | 'workload-end' | 'end'; readonly case: string; readonly seed: number; readonly plan?: unknown }
  );

export type HistoryRecord = WorkerRecord | ParentRecord;
