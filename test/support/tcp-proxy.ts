import { connect, createServer, type Server, type Socket } from 'node:net';

interface ReplyTrap {
  readonly matches: (request: Buffer) => boolean;
  readonly sprung: () => void;
}

/**
 * A loopback TCP proxy in front of Redis, so a drill can cut one application's connection to Redis while
 * everything else (other applications, the database) keeps working, lose one reply on the way back, or
 * hold back what the server sends (a replica that stops receiving its primary's stream).
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private cutOff = false;
  private trap?: ReplyTrap;
  private holding = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => proxy!.accept(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new TcpProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Drops every connection and refuses new ones until restore(): a network partition. */
  cut(): void {
    this.cutOff = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.cutOff = false;
  }

  /**
   * The next request whose bytes satisfy `matches` reaches the server, but its reply never comes back:
   * when the server answers, the answer is dropped and the client's connection is cut (new connections
   * are accepted as usual). Resolves once that happened. This is the lost reply a client library answers
   * by re-sending the command after it reconnected.
   */
  loseReplyTo(matches: (request: Buffer) => boolean): Promise<void> {
    return new Promise((resolve) => (this.trap = { matches, sprung: resolve }));
  }

  /** From now on, what the server sends is discarded (not buffered) while requests still go through. */
  holdServerData(): void {
    this.holding = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.cutOff) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    let loseNextReply = false;
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(socket);
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        this.sockets.delete(socket);
        other.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      const trap = this.trap;
      if (trap?.matches(chunk)) {
        this.trap = undefined;
        loseNextReply = true;
        upstream.once('data', () => {
          client.destroy();
          upstream.destroy();
          trap.sprung();
        });
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (loseNextReply || this.holding) return;
      client.write(chunk);
    });
  }
}
