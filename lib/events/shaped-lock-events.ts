import type { LockShapeName } from '../stores/lock-shape.js';
import type { LockEventName } from './lock-event.types.js';
import type { LockEvents } from './lock-events.js';

/**
 * The application's events as the leases of one shape report to them: the same listeners and channels,
 * every payload with `shape` (and `permits` for a semaphore) added. Given to that shape's acquirer and its
 * leases only, so plain leases build exactly the payloads they always did.
 */
export function eventsOfShape(events: LockEvents, shape: LockShapeName, permits: number | undefined): LockEvents {
  const extra = permits === undefined ? { shape } : { shape, permits };
  // Inherits `on` and `wants` (and their state) from the application's instance; only `emit` differs.
  const shaped = Object.create(events) as LockEvents;
  shaped.emit = ((event: LockEventName, build: () => object) => events.emit(event, () => ({ ...build(), ...extra }) as never)) as LockEvents['emit'];
  return shaped;
}
