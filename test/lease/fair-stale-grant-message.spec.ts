import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { parseLockValue } from '../../lib/stores/redis/scripts/lock-value';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { spinUntil } from '../support/until';

/**
 * A proxy whose first connection (the store's command connection; the subscriber comes later) can have
 * its replies held back (buffered, in order) until a given number of further requests went through.
 */
class ReplyDelayProxy {
  private readonly sockets = new Set<Socket>();
  private accepted = 0;
  private held?: { buffered: Buffer[]; requestsLeft: number; release: () => void };
  private constructor(private readonly server: Server) {}
  static async start(targetPort: number): Promise<ReplyDelayProxy> {
    let proxy: ReplyDelayProxy | undefined;
    const server = createServer((client) => proxy!.accept(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new ReplyDelayProxy(server);
    return proxy;
  }
  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }
  /** Replies of the command connection are held until `requests` more requests have gone through. */
  holdReplies(requests: number): void {
    this.held = { buffered: [], requestsLeft: requests, release: () => undefined };
  }
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
  private accept(client: Socket, targetPort: number): void {
    const first = ++this.accepted === 1;
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (data) => {
      upstream.write(data);
      const held = this.held;
      if (first && held && --held.requestsLeft < 0) {
        this.held = undefined;
        for (const chunk of held.buffered) client.write(chunk);
      }
    });
    upstream.on('data', (data) => {
      if (first && this.held) this.held.buffered.push(data);
      else client.write(data);
    });
  }
}

/**
 * A grant announced for a waiter before it registered is kept for it (GrantChannel's unclaimed
 * messages). When that grant was taken back meanwhile — the join that queued the waiter went unanswered,
 * and its clean-up left the queue and released the key it found handed over — the kept message must not
 * be delivered to the waiter's next join as a grant.
 */
describe('fair queue: a hand-off announced for a join that was then cleaned up', () => {
  it('is not delivered to the retried join as a grant of the key somebody else now holds', async () => {
    const prefix = testPrefix(__filename);
    const layout = new RedisKeyLayout(prefix);
    // Two keys of one hash slot: the warm-up's key leaves b's grant channel for the slot subscribed.
    const [key, warmKey] = ['{s}k', '{s}warm'];
    const lockKey = layout.lockKey(key);
    const proxy = await ReplyDelayProxy.start(Number(new URL(redisUrl()).port));
    const a = new RedisLockStore(createRedisConnection(redisUrl()), { keyPrefix: prefix, commandTimeoutMs: 5_000, fair: true });
    const b = new RedisLockStore(createRedisConnection(proxy.url), { keyPrefix: prefix, commandTimeoutMs: 500, fair: true });
    const redis = new Redis(redisUrl());
    const request = (token: string, forKey = key) => ({ key: forKey, token, leaseMs: 30_000, holder: 'test', deadline: Date.now() + 20_000 });
    const queued = async (n: number, forKey = key) => (await redis.llen(layout.queueKey(layout.lockKey(forKey)))) === n;
    try {
      // Warm-up: b waits once for the key, so its grant channel for the key's slot stays subscribed.
      const warmHolder = randomUUID();
      await a.acquire(warmKey, warmHolder, 30_000, 'test');
      const warm = request(randomUUID(), warmKey);
      const warmWait = b.acquireQueued!(warm);
      await spinUntil(() => queued(1, warmKey));
      await a.release(warmKey, warmHolder, 0);
      expect((await warmWait).result.acquired).toBe(true);
      await b.release(warmKey, warm.token, 0);

      const holder = randomUUID();
      await a.acquire(key, holder, 30_000, 'test');
      // b's join gets in line, but its reply is held until its clean-up (the next request) went out.
      proxy.holdReplies(1);
      const w = request(randomUUID());
      const wWait = b.acquireQueued!(w);
      await spinUntil(() => queued(1));
      const x = request(randomUUID());
      const xWait = a.acquireQueued!(x);
      await spinUntil(() => queued(2));
      // Handed to b's waiter and announced on b's grant channel while its join is still unanswered.
      await a.release(key, holder, 0);

      const wOutcome = await wWait;
      // Told it holds the key (for at least its hand-off TTL from leaseStartedAt): Redis says so too.
      const stored = await redis.get(lockKey);
      expect(wOutcome.result.acquired).toBe(true);
      expect(stored && parseLockValue(stored)?.token).toBe(w.token);
      await b.release(key, w.token, 0);
      await xWait;
    } finally {
      await a.close();
      await b.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await proxy.close();
    }
  });
});
