import type { Lease } from '../../lib/index';
import type { LockApp } from '../support/lock-app';
import type { DrillTimeline, TimelineEntry } from './drill-timeline';

/**
 * The hand-offs a drill makes after its fault: every application takes `key` `rounds` times, the
 * applications at once, each section one event-loop turn long, all recorded on `timeline`.
 */
export async function handOffRounds(apps: ReadonlyMap<string, LockApp>, timeline: DrillTimeline, key: string, rounds: number): Promise<void> {
  await Promise.all(
    [...apps].map(async ([name, app]) => {
      for (let i = 0; i < rounds; i++) {
        await app.locks.withLock(key, { waitMs: 60_000 }, (lease) => timeline.section(name, lease, () => new Promise((resolve) => setImmediate(resolve))));
      }
    }),
  );
}

/**
 * What a drill whose fault must cost no lease asserts over its history: never two sections of `key` at
 * once nor a token that does not rise; after `fault`, no lease lost, `first` (the waiter of the fault's
 * moment) served first, and `sections` sections in all.
 */
export function expectServedThrough(timeline: DrillTimeline, key: string, fault: TimelineEntry, first: string, sections: number): void {
  const history = timeline.toString();
  expect({ violations: timeline.violations(key), history }).toEqual({ violations: [], history });
  const afterFault = timeline.after(fault);
  expect(afterFault.filter((entry) => entry.kind === 'lost')).toEqual([]);
  const entered = afterFault.filter((entry) => entry.kind === 'enter');
  expect(entered.map((entry) => entry.app).slice(0, 1)).toEqual([first]);
  expect(entered).toHaveLength(sections);
}

/**
 * The moment a leader- or master-failure drill injects its fault at: `holder` ('a') in its section of
 * `key` until `leave()` is called, `waiter` ('b') waiting for the key; `done` settles once both sections
 * ran. The drill then makes sure the waiter is really waiting (store-specific) before the fault.
 */
export async function heldAndWaitedFor(apps: ReadonlyMap<string, LockApp>, timeline: DrillTimeline, key: string): Promise<{ lease: Lease; leave: () => void; done: Promise<unknown> }> {
  const [a, b] = [apps.get('a')!, apps.get('b')!];
  let leave!: () => void;
  const leaving = new Promise<void>((resolve) => (leave = resolve));
  let entered!: (lease: Lease) => void;
  const inside = new Promise<Lease>((resolve) => (entered = resolve));
  const holding = a.locks.withLock(key, (lease) =>
    timeline.section('a', lease, async () => {
      entered(lease);
      await leaving;
    }),
  );
  const lease = await inside;
  const waiting = b.locks.withLock(key, { waitMs: 60_000 }, (granted) => timeline.section('b', granted, async () => undefined));
  return { lease, leave, done: Promise.all([holding, waiting]) };
}
