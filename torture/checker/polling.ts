import type { Bounds } from './bounds';
import { meets } from './intervals';
import type { Model } from './model';
import type { Violation } from './violation';
import { anyFault } from './windows';

/**
 * (h) No steady polling. A wait that no fault came near (no server, network or application fault from a
 * little before it began until it ended, nor a pause, close or start of its own process) is subscribed to
 * release notifications; the fallback backoff is a safety net for a missed one. More backoff wake-ups
 * than `bounds.backoffAllowed(waitedMs)` is polling.
 */
export function checkPolling(model: Model, bounds: Bounds): Violation[] {
  const faults = anyFault(model, bounds);
  const violations: Violation[] = [];
  for (const wait of model.waits) {
    const span = { from: wait.t - wait.waitedMs - bounds.slackMs, to: wait.t };
    if (meets(faults, span)) continue;
    const proc = model.procs.get(wait.actor);
    if (proc && (meets(proc.pauses, span) || meets(proc.closes, span))) continue;
    // Just after the application started (or reopened), its subscriber connection may still be coming up:
    // until the subscription is confirmed (a refused one is asked for again at each wake-up), the wait is on
    // the exponential backoff (lib/acquisition/release-subscription.ts), which guarantee 10 allows (no
    // steady poll while the channel is live).
    if (proc && meets(proc.readies.map((t) => ({ from: t, to: t + bounds.recoveryMs })), span)) continue;
    const allowed = bounds.backoffAllowed(wait.waitedMs);
    if (wait.wakeUps.backoff <= allowed) continue;
    const { notification, backoff, expiry, deadline } = wait.wakeUps;
    violations.push({
      invariant: 'h',
      key: wait.key,
      at: wait.t,
      message: `${wait.actor} waited ${wait.waitedMs} ms for "${wait.key}" (${wait.ev}) and woke ${backoff}× by backoff (notification ${notification}, expiry ${expiry}, deadline ${deadline}; allowed ${allowed.toFixed(1)})`,
    });
  }
  return violations;
}
