import { Redis } from 'ioredis';
import type { FaultResult } from '../faults/fault-kinds';

/** A failover the sentinels made on their own, recorded as a fault the plan did not ask for. */
export type UnplannedFault = FaultResult & { readonly kind: 'failover'; readonly start: number };

/**
 * Watches the sentinels' own announcements (`+sdown` of the primary, `+switch-master`): a pause or a
 * starved box can make them fail over although the plan asked for none, and a failover can lose a grant
 * with asynchronous replication. Reading the new primary right after the pause misses a failover that the
 * sentinels decide a moment later; their announcement does not. Each switch the harness did not cause
 * itself is reported, from when the sentinels first judged the old primary down, until `settle` (the new
 * primary has its replica in sync): the checker then opens a failover window over it.
 */
export class SentinelSwitches {
  private readonly subscribers: Redis[];
  private readonly downSince = new Map<string, number>();
  /** Switches already reported (each sentinel announces the same one). */
  private readonly seen = new Set<string>();
  private scripted = 0;

  constructor(
    sentinels: ReadonlyArray<{ host: string; port: number }>,
    private readonly settle: () => Promise<void>,
    private readonly report: (fault: UnplannedFault) => void,
  ) {
    // Every sentinel announces the switch; one is enough, and a second covers one that is starved.
    this.subscribers = sentinels.slice(0, 2).map(({ host, port }) => {
      const subscriber = new Redis({ host, port, maxRetriesPerRequest: null, lazyConnect: false });
      subscriber.on('error', () => undefined);
      void subscriber.subscribe('+sdown', '+switch-master').catch(() => undefined);
      subscriber.on('message', (channel: string, message: string) => this.heard(channel, message));
      return subscriber;
    });
  }

  /** Runs a scripted failover (SENTINEL FAILOVER, a primary kill): its switch is the plan's, not unplanned. */
  async scriptedDuring<T>(run: () => Promise<T>): Promise<T> {
    this.scripted++;
    try {
      return await run();
    } finally {
      this.scripted--;
    }
  }

  close(): void {
    for (const subscriber of this.subscribers) subscriber.disconnect();
  }

  private heard(channel: string, message: string): void {
    const now = Date.now();
    const fields = message.split(' ');
    if (channel === '+sdown' && fields[0] === 'master') {
      // "master <name> <ip> <port>": the first sentinel to judge the primary down.
      const port = fields[3]!;
      if (!this.downSince.has(port)) this.downSince.set(port, now);
      return;
    }
    if (channel !== '+switch-master') return;
    // "<name> <old ip> <old port> <new ip> <new port>", announced by each sentinel: reported once.
    const [, , oldPort, , newPort] = fields;
    const id = `${oldPort}->${newPort}`;
    const start = this.downSince.get(oldPort!) ?? now;
    this.downSince.delete(oldPort!);
    if (this.scripted > 0 || this.seen.has(id)) return;
    this.seen.add(id);
    setTimeout(() => this.seen.delete(id), 30_000).unref();
    void this.settle()
      .catch(() => undefined)
      .then(() =>
        this.report({
          kind: 'failover',
          target: `primary:${oldPort}`,
          start,
          end: now,
          recovered: Date.now(),
          detail: `unplanned: the sentinels judged ${oldPort} down and failed over to ${newPort}`,
        }),
      );
  }
}
