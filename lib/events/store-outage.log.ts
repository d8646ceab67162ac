import type { Logger } from '@nestjs/common';
import type { LockEvents } from './lock-events.js';

/**
 * An outage of the store as the operator needs it in the log: one warning when acquisitions start failing
 * (which server, why: the callers get a 503 each and the protected code does not run), the rest at debug,
 * and one line when the store grants again, with how many acquisitions failed meanwhile. Only an outage
 * subscribes to the grants that end it, so a healthy application pays nothing for this.
 */
export class StoreOutageLog {
  private failed = 0;
  private stopWatching?: () => void;

  constructor(
    private readonly events: LockEvents,
    private readonly logger: Logger,
  ) {
    events.on('store-unavailable', (e) => this.failure(`key=${e.key} waitedMs=${e.waitedMs} attempts=${e.attempts}: ${describe(e.error)}`));
  }

  private failure(detail: string): void {
    if (this.failed++ > 0) {
      this.logger.debug(`store unavailable ${detail}`);
      return;
    }
    this.logger.warn(
      `Lock store unavailable (${detail}). Locked calls fail closed with LockStoreUnavailableError (HTTP 503) until it ` +
        'answers again; further failures are logged at debug level.',
    );
    const stops = (['acquired', 'renewed', 'released'] as const).map((event) => this.events.on(event, () => this.recovered()));
    this.stopWatching = () => stops.forEach((stop) => stop());
  }

  private recovered(): void {
    this.stopWatching?.();
    this.stopWatching = undefined;
    this.logger.log(`Lock store answers again (${this.failed} acquisition(s) failed while it did not).`);
    this.failed = 0;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
