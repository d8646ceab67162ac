import { channel, type Channel } from 'node:diagnostics_channel';
import { LOCK_EVENT_NAMES, type LockEventName } from './lock-event.types.js';

/** Every diagnostics channel of this package is named under this prefix. */
export const LOCK_CHANNEL_PREFIX = 'nestjs-distributed-lock:';

/**
 * The `node:diagnostics_channel` name each lock event is published on, e.g.
 * `nestjs-distributed-lock:acquired`, `nestjs-distributed-lock:lost`. The payload is the event's, the same
 * object `LockEvents` listeners get. Named channels are process-wide: they carry the events of every
 * application in the process (and of both the CommonJS and ESM copies of this package).
 */
export function lockEventChannelName(event: LockEventName): string {
  return `${LOCK_CHANNEL_PREFIX}${event}`;
}

/**
 * @internal The channel objects, created once: publishing costs a `hasSubscribers` check while nobody
 * subscribes. Holding them here also keeps them from being collected between subscriptions.
 */
export const LOCK_EVENT_CHANNELS: Readonly<Record<LockEventName, Channel>> = Object.freeze(
  Object.fromEntries(LOCK_EVENT_NAMES.map((event) => [event, channel(lockEventChannelName(event))])) as Record<LockEventName, Channel>,
);
