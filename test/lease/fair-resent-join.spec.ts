import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import { warmFairScripts } from '../support/fair-scripts';
import { TcpProxy } from '../support/tcp-proxy';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { pollUntil } from '../support/until';

const LEASE_MS = 30_000;

/**
 * A join whose reply is lost is sent again by the client once it has reconnected, and that second delivery
 * is answered: the wait may stand in line twice, and its first entry may be handed the key before a later
 * look finds the other one still waiting. An announced grant is then not taken on the message's word
 * (counted from that later look, the lease would outlast the hand-off's one-heartbeat TTL): a look at the
 * key confirms it, and keeps the key for the whole lease from the look.
 */
describe('fair queue: a join answered only after a reconnect', () => {
  it('takes an announced grant only once a look at the key confirmed it, for the whole lease', async () => {
    const prefix = testPrefix(__filename);
    const layout = new RedisKeyLayout(prefix);
    const proxy = await TcpProxy.start(Number(new URL(redisUrl()).port));
    const holder = new RedisLockStore(createRedisConnection(redisUrl()), { keyPrefix: prefix, commandTimeoutMs: 2_000, fair: true });
    const waiter = new RedisLockStore(createRedisConnection(proxy.url), { keyPrefix: prefix, commandTimeoutMs: 2_000, fair: true });
    const admin = new Redis(redisUrl());
    try {
      await warmFairScripts(waiter);
      const held = randomUUID();
      expect(await holder.acquire('k', held, LEASE_MS, 'holder')).toMatchObject({ acquired: true });
      const token = randomUUID();
      // The join reaches the server, its reply is lost and the connection cut: the client sends it again.
      const joinLost = proxy.loseReplyTo((request) => request.includes(token));
      const waiting = waiter.acquireQueued!({ key: 'k', token, leaseMs: LEASE_MS, holder: 'waiter', deadline: Date.now() + 20_000 });
      await joinLost;
      const lockKey = layout.lockKey('k');
      const channels = layout.grantChannel(layout.slotTag(lockKey), '*');
      // In line once (a look drops a duplicate entry) and listening for its grant.
      await pollUntil(
        async () => (await admin.llen(layout.queueKey(lockKey))) === 1 && ((await admin.pubsub('CHANNELS', channels)) as string[]).length === 1,
        'the waiter in line once, subscribed to its grant channel',
      );
      await holder.release('k', held, 0);
      const outcome = await waiting;
      expect(outcome.result).toMatchObject({ acquired: true });
      // Confirmed by a look: the key lives the whole lease, and no shorter hand-off TTL is reported.
      expect(outcome.grantedTtlMs).toBeUndefined();
      expect(await admin.pttl(lockKey)).toBeGreaterThan(LEASE_MS / 2);
      await waiter.release('k', token, 0);
    } finally {
      await Promise.all([holder.close(), waiter.close(), proxy.close()]);
      admin.disconnect();
    }
  });
});
