import { subscribe, unsubscribe, channel } from 'node:diagnostics_channel';
import { Logger } from '@nestjs/common';
import { StaleFencingTokenError } from '../errors/stale-fencing-token.error.js';

/**
 * The diagnostics channel every refused stale write is published on. A named channel is process-wide on
 * purpose: the fencing helpers are called with the user's database client, not inside one application, and
 * the CommonJS and ESM copies of this package publish to the same channel by name.
 */
export const STALE_FENCING_TOKEN_CHANNEL = 'nestjs-distributed-lock:stale-fencing-token';

/** Published once per write a fencing helper refused. */
export interface StaleFencingTokenEvent {
  /** What refused the write (a table name): low cardinality, fit for a metric attribute. */
  readonly resource: string;
  readonly fencingToken: number;
  readonly currentFencingToken: number | undefined;
  readonly lockKey: string | undefined;
  /** Which helper refused it: 'sql', 'typeorm', 'drizzle', or a custom `FencedWrite`'s own name. */
  readonly helper: string;
}

const staleWrites = channel(STALE_FENCING_TOKEN_CHANNEL);
const logger = new Logger('DistributedLock');

/**
 * Calls `listener` for every write a fencing helper refused, in any application of this process (metrics,
 * alerts, tests). Returns the function that unsubscribes. A listener that throws is logged and ignored: it
 * runs inside the caller's write path.
 */
export function onStaleFencingToken(listener: (event: StaleFencingTokenEvent) => void): () => void {
  const onMessage = (message: unknown): void => {
    try {
      listener(message as StaleFencingTokenEvent);
    } catch (error) {
      logger.error('A stale-fencing-token listener threw; the write path is unaffected.', error instanceof Error ? error.stack : error);
    }
  };
  subscribe(STALE_FENCING_TOKEN_CHANNEL, onMessage);
  return () => void unsubscribe(STALE_FENCING_TOKEN_CHANNEL, onMessage);
}

/** @internal Publishes the refusal and returns the error the helper throws. */
export function staleFencingToken(event: StaleFencingTokenEvent): StaleFencingTokenError {
  if (staleWrites.hasSubscribers) staleWrites.publish(event);
  return new StaleFencingTokenError(event.resource, event.fencingToken, event.currentFencingToken, event.lockKey);
}
