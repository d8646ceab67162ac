import type { LockAdapter, LockHandle } from '../adapters/lock-adapter.js';
import { now, sleep } from '../support/clock.js';
import { quantile } from '../support/stats.js';

export interface ContentionPlan {
  readonly workers: number;
  readonly holdMs: number;
  readonly durationMs: number;
}

/** What one contended run shows, before any command counting. */
export interface ContentionOutcome {
  /** Critical sections entered before the stop, per second. */
  readonly sectionsPerSecond: number;
  /** All critical sections, including those of workers still waiting at the stop (the drain). */
  readonly sections: number;
  /** From one holder leaving its critical section to the next (different) worker entering. */
  readonly handoffP50Ms: number;
  readonly handoffP99Ms: number;
  /** Share of critical sections that went to the worker that just released (a re-grab, not a handoff). */
  readonly regrabShare: number;
  /** Workers that entered no critical section before the stop. */
  readonly starvedWorkers: number;
  readonly fewestSectionsPerWorker: number;
  readonly mostSectionsPerWorker: number;
  /** Longest time one acquire took (or failed after). */
  readonly maxWaitMs: number;
  /** Mean time an acquire took (every one, failed ones included): the yardstick for the longest. */
  readonly meanWaitMs: number;
  /** Acquires that gave up (wait budget spent or error). */
  readonly failedAcquires: number;
  readonly failedReleases: number;
  /** Times a worker entered while another was inside: must be 0. */
  readonly exclusionViolations: number;
}

interface Section {
  readonly worker: number;
  readonly entered: number;
  readonly left: number;
}

/**
 * `workers` loops on ONE key, each over the adapter `worker % adapters.length` (one per application
 * instance): acquire, hold `holdMs`, release, until `durationMs` is over. Workers still waiting then finish
 * their wait (the drain), so every wait is a complete one and the key is free afterwards.
 */
export async function contend(adapters: readonly LockAdapter[], key: string, plan: ContentionPlan): Promise<ContentionOutcome> {
  const startedAt = now();
  const stopAt = startedAt + plan.durationMs;
  const sections: Section[] = [];
  let inside = 0;
  let exclusionViolations = 0;
  let failedAcquires = 0;
  let failedReleases = 0;
  let maxWaitMs = 0;
  let waitedMs = 0;
  let waits = 0;

  await Promise.all(
    Array.from({ length: plan.workers }, async (_, worker) => {
      const adapter = adapters[worker % adapters.length]!;
      while (now() < stopAt) {
        const asked = now();
        let handle: LockHandle;
        try {
          handle = await adapter.acquire(key);
        } catch {
          failedAcquires++;
          maxWaitMs = Math.max(maxWaitMs, now() - asked);
          waitedMs += now() - asked;
          waits++;
          continue;
        }
        const entered = now();
        maxWaitMs = Math.max(maxWaitMs, entered - asked);
        waitedMs += entered - asked;
        waits++;
        if (++inside > 1) exclusionViolations++;
        await sleep(plan.holdMs);
        inside--;
        sections.push({ worker, entered, left: now() });
        await handle.release().catch(() => failedReleases++);
      }
    }),
  );

  sections.sort((a, b) => a.entered - b.entered);
  const handoffs: number[] = [];
  let regrabs = 0;
  for (let i = 1; i < sections.length; i++) {
    const previous = sections[i - 1]!;
    const next = sections[i]!;
    if (next.entered >= stopAt) break;
    if (next.worker === previous.worker) regrabs++;
    else handoffs.push(next.entered - previous.left);
  }
  const beforeStop = sections.filter((section) => section.entered < stopAt);
  const perWorker = Array.from({ length: plan.workers }, (_, worker) => beforeStop.filter((s) => s.worker === worker).length);
  return {
    sectionsPerSecond: (beforeStop.length * 1000) / plan.durationMs,
    sections: sections.length,
    handoffP50Ms: quantile(handoffs, 0.5),
    handoffP99Ms: quantile(handoffs, 0.99),
    regrabShare: beforeStop.length > 1 ? regrabs / (beforeStop.length - 1) : 0,
    starvedWorkers: perWorker.filter((count) => count === 0).length,
    fewestSectionsPerWorker: Math.min(...perWorker),
    mostSectionsPerWorker: Math.max(...perWorker),
    maxWaitMs,
    meanWaitMs: waits > 0 ? waitedMs / waits : NaN,
    failedAcquires,
    failedReleases,
    exclusionViolations,
  };
}
