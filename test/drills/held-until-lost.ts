import type { Lease, LockEventMap } from '../../lib/index';
import type { LockApp } from '../support/lock-app';
import type { DrillTimeline } from './drill-timeline';

/** A critical section that runs until its lease is lost, as a drill's fault should end it. */
export interface HeldUntilLost {
  /** The lease, once the section runs. */
  readonly lease: Lease;
  /** The locked call: what it settled with (the drills expect a `LeaseLostError`). */
  readonly holding: Promise<unknown>;
  /** The next `lost` event of the key. */
  readonly lost: Promise<LockEventMap['lost']>;
}

/**
 * `app` takes `key` and stays in its section, recorded on `timeline` as `name`, until the lease's signal
 * aborts: the holder of the drills whose fault must end a lease (a majority lost, a master restarted empty).
 */
export async function holdUntilLost(app: LockApp, timeline: DrillTimeline, name: string, key: string): Promise<HeldUntilLost> {
  let entered!: (lease: Lease) => void;
  const inside = new Promise<Lease>((resolve) => (entered = resolve));
  const holding = app.locks
    .withLock(key, (lease) =>
      timeline.section(name, lease, async () => {
        entered(lease);
        await new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
      }),
    )
    .catch((error: unknown) => error);
  const lease = await inside;
  return { lease, holding, lost: app.next('lost', (event) => event.key === key) };
}
