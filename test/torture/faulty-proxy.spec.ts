import { createServer, connect, type Server, type Socket } from 'node:net';
import { FaultyProxy } from '../../torture/faults/faulty-proxy';

/**
 * The torture run's proxy may delay, hold, drop or cut one application's traffic, but never reorder the
 * bytes of a connection: TCP does not, and a reordered reply stream hands one command's reply to another
 * (a queue check reading a release's 1: "reply is not iterable", a fence of 1, two grants believed at
 * once). Seen in a 30-minute redis-fair run at the end of every other proxy-delay stretch.
 */
describe('FaultyProxy', () => {
  let upstream: Server;
  let proxy: FaultyProxy;
  let serverSide: Socket | undefined;
  const connected: Promise<Socket> = new Promise((resolve) => {
    upstream = createServer((socket) => {
      serverSide = socket;
      resolve(socket);
    });
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    proxy = await FaultyProxy.start((upstream.address() as { port: number }).port);
  });
  afterAll(async () => {
    serverSide?.destroy();
    await proxy.close();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('keeps the order of the replies of one connection when a delay ends while some are still held back', async () => {
    const client = connect(proxy.port, '127.0.0.1');
    const server = await connected;
    const expected: string[] = [];
    let received = '';
    const all = new Promise<void>((resolve) => {
      client.on('data', (chunk: Buffer) => {
        received += chunk.toString();
        if (received.length >= expected.join('').length && expected.length === 400) resolve();
      });
    });
    const send = (i: number): void => {
      const reply = `<${i}>`;
      expected.push(reply);
      server.write(reply);
    };
    proxy.set({ kind: 'delay', ms: 40 });
    // Replies written over a few event-loop turns while delayed, then more once the delay is lifted: the
    // later ones must wait for the earlier ones, whatever the timers' lengths.
    for (let i = 0; i < 200; i++) {
      send(i);
      if (i % 20 === 19) await new Promise((resolve) => setImmediate(resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    proxy.set({ kind: 'pass' });
    for (let i = 200; i < 400; i++) {
      send(i);
      if (i % 20 === 19) await new Promise((resolve) => setImmediate(resolve));
    }
    await all;
    expect(received).toBe(expected.join(''));
    client.destroy();
  });
});
