import type { Lease } from '../../lib/index';
import type { LockApp } from '../support/lock-app';

export type TimelineKind = 'acquired' | 'renewed' | 'renew-failed' | 'lost' | 'released' | 'enter' | 'exit' | 'marker';

export interface TimelineEntry {
  /** Position in the one JavaScript thread every application of the drill runs on: a total order. */
  readonly seq: number;
  readonly at: number;
  readonly app: string;
  readonly kind: TimelineKind;
  readonly key?: string;
  readonly fencingToken?: number;
  readonly detail?: string;
}

/**
 * A drill's record: the lock events of every application, the moments each critical section was entered
 * and left, and the drill's own markers (a member killed, quorum restored). All applications live in the
 * test process, so entries are totally ordered by `seq`; the assertions read that order, not the clock.
 */
export class DrillTimeline {
  readonly entries: TimelineEntry[] = [];
  private seq = 0;

  record(app: string, kind: TimelineKind, fields: Omit<TimelineEntry, 'seq' | 'at' | 'app' | 'kind'> = {}): TimelineEntry {
    const entry = { seq: ++this.seq, at: Date.now(), app, kind, ...fields };
    this.entries.push(entry);
    return entry;
  }

  marker(detail: string): TimelineEntry {
    return this.record('drill', 'marker', { detail });
  }

  /** Records every lock event of `app` under `name`. */
  follow(name: string, app: LockApp): void {
    for (const kind of ['acquired', 'renewed', 'renew-failed', 'lost', 'released'] as const) {
      app.events.on(kind, (event) =>
        this.record(name, kind, {
          key: event.key,
          fencingToken: event.fencingToken,
          detail: 'reason' in event ? String(event.reason) : undefined,
        }),
      );
    }
  }

  /** Runs `body` as a critical section of `app`, recording when it was entered and left. */
  async section<T>(app: string, lease: Lease, body: () => Promise<T>): Promise<T> {
    this.record(app, 'enter', { key: lease.key, fencingToken: lease.fencingToken });
    try {
      return await body();
    } finally {
      this.record(app, 'exit', { key: lease.key, fencingToken: lease.fencingToken });
    }
  }

  /**
   * Everything wrong with the record for `key`: two critical sections open at once, or a section whose
   * fencing token is not greater than the one before it. Empty when exclusion held.
   */
  violations(key: string): string[] {
    const problems: string[] = [];
    let open: TimelineEntry | undefined;
    let lastToken = 0;
    for (const entry of this.entries) {
      if (entry.key !== key) continue;
      if (entry.kind === 'enter') {
        if (open) problems.push(`${entry.app} entered (token ${entry.fencingToken}) while ${open.app} (token ${open.fencingToken}) was inside`);
        if (entry.fencingToken! <= lastToken) problems.push(`${entry.app} entered with token ${entry.fencingToken} after token ${lastToken}`);
        lastToken = Math.max(lastToken, entry.fencingToken!);
        open = entry;
      } else if (entry.kind === 'exit' && open?.fencingToken === entry.fencingToken) {
        open = undefined;
      }
    }
    return problems;
  }

  /** The entries after `marker` (exclusive), for "after the kill" questions. */
  after(marker: TimelineEntry): TimelineEntry[] {
    return this.entries.filter((entry) => entry.seq > marker.seq);
  }

  /** A compact dump for failure messages. */
  toString(): string {
    return this.entries
      .map((e) => `${e.seq} +${e.at - this.entries[0]!.at}ms ${e.app} ${e.kind}${e.key ? ` ${e.key}` : ''}${e.fencingToken ? ` #${e.fencingToken}` : ''}${e.detail ? ` (${e.detail})` : ''}`)
      .join('\n');
  }
}
