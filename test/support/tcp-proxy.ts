import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of Redis, so a drill can cut one application's connection to Redis while
 * everything else (other applications, the database) keeps working.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private cutOff = false;

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
    client.pipe(upstream).pipe(client);
  }
}
