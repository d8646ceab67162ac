import { Redis } from 'ioredis';

export interface MonitoredTraffic {
  /** Commands a client sent over the wire: each one is a round trip (pipelined or not). */
  readonly roundTrips: Map<string, number>;
  /** Commands a Lua script ran inside the server: they cost server time but no round trip. */
  readonly insideScripts: Map<string, number>;
}

/**
 * `INFO commandstats` counts a script's inner calls like client commands, so it cannot tell round trips
 * from server work. MONITOR can: it tags script-internal calls with the source "lua". It slows the server
 * down, so it is only used in the cost pass, never while timing.
 */
export class CommandMonitor {
  private readonly roundTrips = new Map<string, number>();
  private readonly insideScripts = new Map<string, number>();
  private marker?: { text: string; seen: () => void };

  private constructor(
    private readonly connection: Redis,
    private readonly ignoredSource: string,
  ) {}

  /** Starts monitoring; commands sent from `ignoredSource` (the bench's admin connection) are not counted. */
  static async start(url: string, ignoredSource: string): Promise<CommandMonitor> {
    const connection = new Redis(url, { lazyConnect: true });
    await connection.connect();
    const monitorConnection = await connection.monitor();
    const monitor = new CommandMonitor(monitorConnection, ignoredSource);
    monitorConnection.on('monitor', (_time: string, args: string[], source: string) => monitor.record(args, source));
    return monitor;
  }

  /**
   * Waits until everything sent before this call has reached the monitor, by sending a marker down the
   * admin connection, then returns the counts so far and starts counting afresh.
   */
  async take(admin: Redis): Promise<MonitoredTraffic> {
    const text = `bench-mark-${Math.random()}`;
    const seen = new Promise<void>((resolve) => (this.marker = { text, seen: resolve }));
    await admin.echo(text);
    await seen;
    const traffic = { roundTrips: new Map(this.roundTrips), insideScripts: new Map(this.insideScripts) };
    this.roundTrips.clear();
    this.insideScripts.clear();
    return traffic;
  }

  async stop(): Promise<void> {
    this.connection.disconnect();
  }

  private record(args: string[], source: string): void {
    const name = String(args[0] ?? '').toLowerCase();
    if (source === this.ignoredSource) {
      if (name === 'echo' && this.marker && args[1] === this.marker.text) this.marker.seen();
      return;
    }
    const counts = source === 'lua' ? this.insideScripts : this.roundTrips;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
}

/** The `ip:port` MONITOR reports for a connection. */
export async function sourceAddress(connection: Redis): Promise<string> {
  const info = (await connection.call('CLIENT', 'INFO')) as string;
  const addr = /(?:^| )addr=(\S+)/.exec(info)?.[1];
  if (!addr) throw new Error(`CLIENT INFO gave no addr: ${info}`);
  return addr;
}
