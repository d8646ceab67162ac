import { connect, createServer, type Server, type Socket } from 'node:net';

/** What the proxy does to the traffic right now. */
export type ProxyMode =
  | { readonly kind: 'pass' }
  /** Every reply reaches the client `ms` late, in order: a slow network. */
  | { readonly kind: 'delay'; readonly ms: number }
  /** Nothing moves either way until the mode changes, then everything does: a stalled server. */
  | { readonly kind: 'hold' }
  /** Replies are thrown away; when the mode changes, the connections that lost replies are cut. */
  | { readonly kind: 'drop' }
  /** Every connection is cut and new ones are refused: a partition. */
  | { readonly kind: 'cut' };

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  /** When the last delayed reply is due, so that replies keep their order. */
  lastDue: number;
  held: Array<{ to: Socket; chunk: Buffer }>;
  dropped: boolean;
}

/**
 * A loopback TCP proxy in front of one server port, for one application's connections only: it delays,
 * holds, drops or cuts what passes while every other client (the other applications, the sampler, the
 * fenced register) talks to the server directly. Unlike test/support/tcp-proxy.ts, which springs one
 * trap for a scripted drill, its mode is switched by the fault schedule for a stretch of time.
 */
export class FaultyProxy {
  private readonly pairs = new Set<Pair>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private mode: ProxyMode = { kind: 'pass' };

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly targetPort: number,
  ) {}

  static async start(targetPort: number): Promise<FaultyProxy> {
    let proxy: FaultyProxy | undefined;
    const server = createServer((client) => proxy!.accept(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new FaultyProxy(server, (server.address() as { port: number }).port, targetPort);
    return proxy;
  }

  set(mode: ProxyMode): void {
    const previous = this.mode;
    this.mode = mode;
    if (mode.kind === 'cut') for (const pair of this.pairs) pair.client.destroy();
    if (previous.kind === 'hold') {
      for (const pair of this.pairs) {
        for (const { to, chunk } of pair.held) to.write(chunk);
        pair.held = [];
      }
    }
    if (previous.kind === 'drop') for (const pair of [...this.pairs]) if (pair.dropped) pair.client.destroy();
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const pair of this.pairs) pair.client.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket): void {
    if (this.mode.kind === 'cut') {
      client.destroy();
      return;
    }
    const upstream = connect(this.targetPort, '127.0.0.1');
    const pair: Pair = { client, upstream, lastDue: 0, held: [], dropped: false };
    this.pairs.add(pair);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        this.pairs.delete(pair);
        other.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (this.mode.kind === 'hold') pair.held.push({ to: upstream, chunk });
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => this.reply(pair, chunk));
  }

  private reply(pair: Pair, chunk: Buffer): void {
    const mode = this.mode;
    if (mode.kind === 'hold') return void pair.held.push({ to: pair.client, chunk });
    if (mode.kind === 'drop') {
      pair.dropped = true;
      return;
    }
    const due = Math.max(pair.lastDue, Date.now() + (mode.kind === 'delay' ? mode.ms : 0));
    if (due <= Date.now() && pair.lastDue <= Date.now()) return void pair.client.write(chunk);
    pair.lastDue = due;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!pair.client.destroyed) pair.client.write(chunk);
    }, due - Date.now());
    this.timers.add(timer);
  }
}
