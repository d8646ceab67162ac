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
  /**
   * Replies delayed and not yet written, in arrival order, each with when it is due. One timer drains
   * them from the front: a later reply never overtakes an earlier one (TCP does not reorder, and a client
   * reading replies out of order matches them to the wrong commands).
   */
  readonly delayed: Array<{ due: number; chunk: Buffer }>;
  drain?: NodeJS.Timeout;
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
        // Requests go up at once; replies queue behind any still delayed, in order.
        for (const { to, chunk } of pair.held) if (to === pair.upstream) to.write(chunk);
        for (const { to, chunk } of pair.held) if (to === pair.client) this.reply(pair, chunk);
        pair.held = [];
      }
    }
    if (previous.kind === 'drop') for (const pair of [...this.pairs]) if (pair.dropped) pair.client.destroy();
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      clearTimeout(pair.drain);
      pair.client.destroy();
    }
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket): void {
    if (this.mode.kind === 'cut') {
      client.destroy();
      return;
    }
    const upstream = connect(this.targetPort, '127.0.0.1');
    const pair: Pair = { client, upstream, delayed: [], held: [], dropped: false };
    this.pairs.add(pair);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        this.pairs.delete(pair);
        clearTimeout(pair.drain);
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
    if (pair.client.destroyed) return;
    const mode = this.mode;
    if (mode.kind === 'hold') return void pair.held.push({ to: pair.client, chunk });
    if (mode.kind === 'drop') {
      pair.dropped = true;
      return;
    }
    const due = Date.now() + (mode.kind === 'delay' ? mode.ms : 0);
    if (pair.delayed.length === 0 && due <= Date.now()) return void pair.client.write(chunk);
    pair.delayed.push({ due, chunk });
    if (pair.delayed.length === 1) this.drainLater(pair);
  }

  /** Writes the delayed replies that are due, from the front, and waits for the next one. */
  private drainLater(pair: Pair): void {
    const head = pair.delayed[0];
    if (!head) return;
    pair.drain = setTimeout(() => {
      pair.drain = undefined;
      while (pair.delayed.length > 0 && pair.delayed[0]!.due <= Date.now()) {
        const { chunk } = pair.delayed.shift()!;
        // Dropping: a reply delayed before the drop is thrown away too (the connection is cut after it).
        if (this.mode.kind === 'drop') pair.dropped = true;
        else if (!pair.client.destroyed) pair.client.write(chunk);
      }
      this.drainLater(pair);
    }, Math.max(0, head.due - Date.now()));
  }
}
