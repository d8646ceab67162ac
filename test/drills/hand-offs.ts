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
