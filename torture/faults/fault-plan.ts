import type { TortureCase } from '../cases';
import { Prng } from '../prng';
import type { FaultKind, PlannedFault } from './fault-kinds';

/** The first fault comes after the applications warmed up; the last leaves time to see its aftermath. */
const WARM_UP_MS = 2_000;
const AFTERMATH_MS = 3_000;

/**
 * The case's faults for one seed, decided before anything starts: kinds dealt from the case's menu in a
 * shuffled deck (each kind once per round, so a long run covers them all), each with its length, target
 * pick and a fault-free gap after it. Only the times are "no earlier than": a fault that runs long
 * (a failover) delays the next.
 */
export function planFaults(seed: number, def: TortureCase, runMs: number): PlannedFault[] {
  const prng = new Prng(seed, `${def.name}/faults`);
  const leaseMax = Math.max(...def.leaseMs);
  const plan: PlannedFault[] = [];
  let deck: FaultKind[] = [];
  for (let at = WARM_UP_MS; at < runMs - AFTERMATH_MS; ) {
    if (deck.length === 0) deck = prng.shuffle(def.faults);
    const kind = deck.shift()!;
    const durationMs = durationFor(kind, def, leaseMax, prng);
    plan.push({ at, kind, durationMs, pick: prng.next() });
    at += durationMs + prng.int(1_500, 4_000);
  }
  return plan;
}

function durationFor(kind: FaultKind, def: TortureCase, leaseMax: number, prng: Prng): number {
  // Sentinel fails a primary over after 1.5 s unanswered: a pause meant as a pause stays below that.
  // Elsewhere stalls reach past two command timeouts (a call and its clean-up both unanswered).
  const stallCap = def.topology === 'sentinel' ? 1_200 : 4_000;
  switch (kind) {
    case 'app-pause':
      return prng.chance(0.4) ? leaseMax + prng.int(300, 1_500) : prng.int(200, 1_200);
    case 'app-kill':
    case 'server-restart':
    case 'leader-kill':
      return prng.int(300, 1_500);
    case 'server-pause':
      return prng.int(500, def.topology === 'cluster' ? 1_500 : stallCap);
    case 'client-pause':
      return prng.int(def.topology === 'sentinel' ? 300 : 1_500, stallCap);
    case 'debug-sleep':
      return prng.int(500, 2_000);
    case 'slot-migration':
      return prng.int(2_500, 4_500);
    case 'proxy-delay':
    case 'proxy-drop':
    case 'proxy-cut':
      return prng.int(500, 2_500);
    default:
      return 0;
  }
}
