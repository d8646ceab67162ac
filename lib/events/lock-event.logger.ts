import { Injectable, Logger } from '@nestjs/common';
import { LockEvents } from './lock-events.js';
import { StoreOutageLog } from './store-outage.log.js';

/**
 * Structured log lines for every lease event through Nest's logger: routine events at debug level, trouble
 * at warn. Tokens appear only as digests.
 */
@Injectable()
export class LockEventLogger {
  private readonly logger = new Logger('DistributedLock');

  // Listens for the application's whole life, shutdown included: that is when leases get abandoned. Only
  // enabled levels subscribe, so with debug logging off a lease costs no formatting at all.
  constructor(events: LockEvents) {
    if (Logger.isLevelEnabled('debug')) {
      events.on('acquired', (e) =>
        this.logger.debug(`acquired key=${e.key} fencing=${e.fencingToken} token=${e.tokenDigest} waitedMs=${e.waitedMs}`),
      );
      events.on('released', (e) =>
        this.logger.debug(`released key=${e.key} fencing=${e.fencingToken} token=${e.tokenDigest} heldMs=${e.heldMs}`),
      );
      events.on('contention', (e) => this.logger.debug(`contention key=${e.key} holderTtlMs=${e.holderTtlMs}`));
      events.on('not-acquired', (e) =>
        this.logger.debug(`not acquired key=${e.key} reason=${e.reason} waitedMs=${e.waitedMs} attempts=${e.attempts}`),
      );
      events.on('deferred', (e) => this.logger.debug(`release deferred to the transaction key=${e.key} fencing=${e.fencingToken} token=${e.tokenDigest}`));
    }
    if (Logger.isLevelEnabled('verbose')) {
      events.on('renewed', (e) => this.logger.verbose(`renewed key=${e.key} fencing=${e.fencingToken} token=${e.tokenDigest}`));
    }
    // The watchdog retries a failing renewal every few hundred ms until the lease's deadline: one warning
    // per lease per RENEW_WARN_EVERY_MS, not one per retry (the rest at debug). Kept by token digest and
    // pruned as it goes, so it never subscribes to the routine events whose payloads it would then cost.
    const warnedAt = new Map<string, number>();
    let prunedAt = Date.now();
    events.on('renew-failed', (e) => {
      const now = Date.now();
      const line = `renew failed key=${e.key} token=${e.tokenDigest}: ${describe(e.error)}`;
      const last = warnedAt.get(e.tokenDigest);
      if (last !== undefined && now - last < RENEW_WARN_EVERY_MS) return this.logger.debug(`${line} (still failing)`);
      if (now - prunedAt >= RENEW_WARN_EVERY_MS) {
        prunedAt = now;
        for (const [digest, at] of warnedAt) if (now - at >= RENEW_WARN_EVERY_MS) warnedAt.delete(digest);
      }
      warnedAt.set(e.tokenDigest, now);
      this.logger.warn(`${line} (retrying until the lease's deadline)`);
    });
    new StoreOutageLog(events, this.logger);
    events.on('lost', (e) =>
      this.logger.warn(`LEASE LOST key=${e.key} fencing=${e.fencingToken} token=${e.tokenDigest} reason=${e.reason}`),
    );
    events.on('release-failed', (e) =>
      this.logger.warn(`release failed key=${e.key} token=${e.tokenDigest}: ${describe(e.error)}`),
    );
  }
}

/** How often one lease's failing renewals are logged as a warning. */
const RENEW_WARN_EVERY_MS = 10_000;

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
