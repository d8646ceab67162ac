import type { Entrant } from '../adapters/contenders.js';
import type { BenchContext } from './bench-context.js';

export interface EntrantRuns<T> {
  readonly entrant: Entrant;
  readonly runs: T[];
  /** Set when the entrant failed; its later repetitions are skipped, the others go on. */
  error?: string;
}

/**
 * Runs every entrant once per round, round after round, rather than all repetitions of one entrant in a row:
 * load from other work on a shared machine then spreads over all entrants instead of hitting one of them.
 * Every other round runs them in reverse: what one entrant leaves behind (garbage, timers, the server's
 * memory) falls on the one after it, and a fixed order would bill it to the same entrant every round.
 */
export async function interleave<T>(
  context: BenchContext,
  entrants: readonly Entrant[],
  repetitions: number,
  measure: (entrant: Entrant, repetition: number) => Promise<T>,
): Promise<EntrantRuns<T>[]> {
  const results = entrants.map((entrant): EntrantRuns<T> => ({ entrant, runs: [] }));
  for (let repetition = 0; repetition < repetitions; repetition++) {
    for (const result of repetition % 2 === 0 ? results : [...results].reverse()) {
      if (result.error) continue;
      try {
        collectGarbage();
        result.runs.push(await measure(result.entrant, repetition));
      } catch (error) {
        result.error = error instanceof Error ? error.message : String(error);
        context.log(`  ${result.entrant.id}: FAILED ${result.error}`);
      }
    }
  }
  return results;
}

/**
 * Opens what an entrant needs on its first repetition and keeps it for the others, so repetitions measure
 * locking, not connecting; closes everything at the end of the scenario.
 */
export class OpenedPerEntrant<R> {
  private readonly opened = new Map<string, Promise<R>>();

  constructor(
    private readonly open: (entrant: Entrant) => Promise<R>,
    private readonly close: (resource: R) => Promise<void>,
  ) {}

  get(entrant: Entrant): Promise<R> {
    let resource = this.opened.get(entrant.id);
    if (!resource) {
      resource = this.open(entrant);
      this.opened.set(entrant.id, resource);
    }
    return resource;
  }

  async closeAll(): Promise<void> {
    for (const resource of this.opened.values()) {
      await resource.then(this.close).catch(() => undefined);
    }
    this.opened.clear();
  }
}

/**
 * A full collection before each entrant's turn (the bench runs with --expose-gc), so the garbage one entrant
 * leaves behind is not collected on the time of the next one in the round.
 */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
