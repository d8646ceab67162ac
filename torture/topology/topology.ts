import type { QueueSample } from '../history/records';
import type { FaultKind, FaultResult, Injector } from '../faults/fault-kinds';

/**
 * The servers of one case, started on free loopback ports, and what can be done to them. The module
 * options are JSON, since they travel to the application processes in their environment.
 */
export interface Topology {
  /** The store part of the module options for application `slot` (slot 0 may talk through a proxy). */
  appOptions(slot: number): Record<string, unknown>;
  /** The same store as the parent's sampler sees it: a direct connection, no proxy. */
  samplerOptions(): Record<string, unknown>;
  /** Redis only: every fair-queue list under `prefix` (plain and shaped lines), read behind the library's back. */
  scanQueues?(prefix: string): Promise<QueueSample[]>;
  /** The server faults of this topology (application faults are the fleet's). */
  readonly injectors: Partial<Record<FaultKind, Injector>>;
  /**
   * Faults the servers made on their own (Sentinel failing over after a pause it judged an outage): each
   * is reported as it settles, and recorded beside the plan's.
   */
  watchUnplanned?(report: (fault: FaultResult & { kind: FaultKind; start: number }) => void): void;
  /** Kills every server by pid and removes their data dirs; idempotent. */
  stop(): Promise<void>;
}

/** A whole-number pick in [0, n) from a plan's `pick` in [0, 1). */
export function choose<T>(items: readonly T[], pick: number): T {
  return items[Math.min(items.length - 1, Math.floor(pick * items.length))]!;
}

/** Resolves after `ms`: the length of a fault the plan decided, not a guess at how long something takes. */
export function hold(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A fault whose end is also its recovery (nothing to wait for once it lifted). */
export function lifted(target: string, detail?: string): { target: string; end: number; recovered: number; detail?: string } {
  const now = Date.now();
  return { target, end: now, recovered: now, ...(detail ? { detail } : {}) };
}

/**
 * The fair-queue entries of one list: `<clockµs>|<heartbeatMs>|<instance>|<waiter>|<token>|<holder>`, or in a
 * line of shaped waiters (`shaped`) `…|<token>|<shape>|<holder>` (lib/stores/redis/scripts/shared-queue.lua.ts).
 */
export function parseQueue(key: string, entries: readonly string[], shaped = false): QueueSample {
  return {
    key,
    ...(shaped ? { shaped } : {}),
    entries: entries.map((entry) => {
      const fields = entry.split('|');
      const [clock = '0', heartbeat = '0'] = fields;
      return { deadline: Number(clock) / 1_000 + Number(heartbeat), holder: fields[shaped ? 6 : 5] ?? '' };
    }),
  };
}

/** `<prefix><mark>{tag}<key>` → `<key>`, for a queue's mark (`#queue:`, `#shared-queue:`). */
export function queueUserKey(prefix: string, mark: string, redisKey: string): string {
  const rest = redisKey.slice(`${prefix}${mark}`.length);
  return rest.slice(rest.indexOf('}') + 1);
}
