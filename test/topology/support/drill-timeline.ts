import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LockApp } from '../../support/lock-app';

export interface TimelineEntry {
  /** ms since the drill started. */
  readonly at: number;
  /** Who: an application's label, or 'drill' for what the drill itself did. */
  readonly actor: string;
  readonly event: string;
  readonly key?: string;
  readonly fencingToken?: number;
  readonly tokenDigest?: string;
  readonly detail?: unknown;
}

/** One lease from its grant until it was released or lost (or the drill ended with it held). */
export interface Hold {
  readonly actor: string;
  readonly key: string;
  readonly fencingToken: number;
  readonly tokenDigest: string;
  readonly from: number;
  readonly until: number;
  readonly end: 'released' | 'lost' | 'held';
}

/** Two holds of one key that overlapped: both holders believed they held it from `from` to `until`. */
export interface Overlap {
  readonly key: string;
  readonly first: Hold;
  readonly second: Hold;
  readonly from: number;
  readonly until: number;
  readonly ms: number;
}

const DIRECTORY = join(__dirname, '../../../.tmp/drill-timelines');

/**
 * A drill's history: every grant (with its fencing token), renewal, failure, loss and release of the
 * applications it watches, and what the drill did to the servers, on one clock. Saved as JSON under
 * .tmp/drill-timelines/ (git-ignored) and asserted afterwards: holds, overlaps, token order.
 */
export class DrillTimeline {
  private readonly entries: TimelineEntry[] = [];
  private readonly startedAt = Date.now();

  constructor(readonly name: string) {}

  /** Something the drill did or observed (a failover started, an acquisition failed). */
  mark(event: string, detail?: unknown, actor = 'drill'): void {
    this.entries.push({ at: Date.now() - this.startedAt, actor, event, ...(detail === undefined ? {} : { detail }) });
  }

  /** Records the lock events of `app` under `actor`. */
  watch(app: LockApp, actor: string): void {
    const push = (event: string, payload: { key: string; fencingToken: number; tokenDigest: string }, detail?: unknown): void => {
      const { key, fencingToken, tokenDigest } = payload;
      this.entries.push({ at: Date.now() - this.startedAt, actor, event, key, fencingToken, tokenDigest, ...(detail === undefined ? {} : { detail }) });
    };
    app.events.on('acquired', (e) => push('acquired', e, { attempts: e.attempts, waitedMs: e.waitedMs }));
    app.events.on('renewed', (e) => push('renewed', e));
    app.events.on('renew-failed', (e) => push('renew-failed', e, describeError(e.error)));
    app.events.on('lost', (e) => push('lost', e, e.reason));
    app.events.on('released', (e) => push('released', e));
    app.events.on('release-failed', (e) => push('release-failed', e, describeError(e.error)));
  }

  /** The marks and events so far, oldest first. */
  all(): readonly TimelineEntry[] {
    return this.entries;
  }

  /** When the first entry matching `predicate` happened (ms since the start), or undefined. */
  when(predicate: (entry: TimelineEntry) => boolean): number | undefined {
    return this.entries.find(predicate)?.at;
  }

  holds(): Hold[] {
    const open = new Map<string, TimelineEntry>();
    const holds: Hold[] = [];
    const close = (grant: TimelineEntry, until: number, end: Hold['end']): void => {
      holds.push({
        actor: grant.actor,
        key: grant.key!,
        fencingToken: grant.fencingToken!,
        tokenDigest: grant.tokenDigest!,
        from: grant.at,
        until,
        end,
      });
    };
    for (const entry of this.entries) {
      if (!entry.tokenDigest) continue;
      const id = `${entry.actor}/${entry.tokenDigest}`;
      if (entry.event === 'acquired') open.set(id, entry);
      if (entry.event === 'released' || entry.event === 'lost' || entry.event === 'release-failed') {
        const grant = open.get(id);
        if (!grant) continue;
        open.delete(id);
        close(grant, entry.at, entry.event === 'lost' ? 'lost' : 'released');
      }
    }
    const end = Date.now() - this.startedAt;
    for (const grant of open.values()) close(grant, end, 'held');
    return holds.sort((a, b) => a.from - b.from);
  }

  /** Every pair of holds of one key whose holders both believed they held it at the same time. */
  overlaps(): Overlap[] {
    const holds = this.holds();
    const overlaps: Overlap[] = [];
    for (let i = 0; i < holds.length; i++) {
      for (let j = i + 1; j < holds.length; j++) {
        const [first, second] = [holds[i]!, holds[j]!];
        if (first.key !== second.key) continue;
        const from = Math.max(first.from, second.from);
        const until = Math.min(first.until, second.until);
        if (until > from) overlaps.push({ key: first.key, first, second, from, until, ms: until - from });
      }
    }
    return overlaps;
  }

  /** Writes the timeline (entries, holds, overlaps) and returns the file's path. */
  save(): string {
    mkdirSync(DIRECTORY, { recursive: true });
    const file = join(DIRECTORY, `${this.name}.json`);
    writeFileSync(file, JSON.stringify({ name: this.name, entries: this.entries, holds: this.holds(), overlaps: this.overlaps() }, null, 2));
    return file;
  }
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} <- ${error.cause.message}` : error.message;
}
