import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockStoreUnavailableError } from '../../lib/index';
import { createRedisConnection } from '../../lib/stores/redis/connection/redis-client.factory';
import { RedisKeyLayout } from '../../lib/stores/redis/redis-key-layout';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store';
import type { QueuedAcquireRequest } from '../../lib/stores/lock-store.interface';
import { startRedisServer, type RedisServer } from '../../scripts/servers/redis-server';
import { waitFor } from '../../scripts/servers/server-probes';
import { expectHandedOnInArrivalOrder } from './fair-queue.scenarios';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { spinUntil } from '../support/until';

/** What the plain path's refusal says (acknowledged-grants.ts), a single attempt's with `fair` too. */
const UNACKNOWLEDGED = /granted the lock, but only 0 of 1 replica\(s\) acknowledged it within 500 ms; it was released/;
/** The same for a queued grant, named as one. */
const UNACKNOWLEDGED_IN_LINE = /granted the lock to a waiter in line, but only 0 of 1 replica\(s\) acknowledged it within 500 ms; it was released/;

/**
 * `fair: true` with `replicas: 1`, on a primary with one replica. Every way a fair waiter learns that it
 * holds the key counts only once the replica acknowledged the grant: the queue-respecting single attempts
 * (WAIT after the script, as the plain acquire), and a queued grant, whether its own join or look made it
 * or another client's release handed the key over (then WAIT on the waiter's connection covers the
 * hand-off only after a write of the waiter's own: the confirmation, a token-checked renewal to the whole
 * lease). With the replica stalled (SIGSTOP: it keeps its link and acknowledges nothing), such a grant is
 * released, never left held, and the acquisition fails closed naming the server and the count.
 */
describe('fair: true with replicas: 1 — every grant a fair waiter learns of is acknowledged by the replica', () => {
  const prefix = testPrefix(__filename);
  const layout = new RedisKeyLayout(prefix);
  let primary: RedisServer;
  let replica: RedisServer;
  let redis: Redis;
  const stores: RedisLockStore[] = [];

  beforeAll(async () => {
    primary = await startRedisServer();
    replica = await startRedisServer({ args: () => ['--replicaof', '127.0.0.1', String(primary.port), '--repl-diskless-sync-delay', '0'] });
    redis = new Redis(primary.url);
    await waitFor('the replica to be in sync', async () => Number(await redis.wait(1, 100)) === 1);
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    redis.disconnect();
    await replica.stop();
    await primary.stop();
  });

  /** An instance's store: WAIT's bound is half the command timeout, 500 ms. */
  const openStore = (): RedisLockStore => {
    const store = new RedisLockStore(createRedisConnection(primary.url), { keyPrefix: prefix, commandTimeoutMs: 1_000, replicas: 1, fair: true });
    stores.push(store);
    return store;
  };
  const request = (key: string, waitMs: number, leaseMs = 20_000): QueuedAcquireRequest => ({
    key,
    token: randomUUID(),
    leaseMs,
    holder: 'test',
    deadline: Date.now() + waitMs,
  });
  const queued = (key: string, length: number, shaped = false) =>
    spinUntil(async () => (await redis.llen(layout.queueKey(layout.lockKey(key), shaped ? 'shaped' : undefined))) === length);

  /**
   * Until the first waiter in line listens on its grant channel and has made the look that follows (its
   * entry renewed): a hand-off from now on reaches it by the channel, a third of a heartbeat before its next
   * look could find it.
   */
  const listening = async (key: string, shaped = false): Promise<void> => {
    const queueKey = layout.queueKey(layout.lockKey(key), shaped ? 'shaped' : undefined);
    const entry = await redis.lindex(queueKey, 0);
    await spinUntil(async () => (await redis.pubsub('CHANNELS', `${prefix}#granted:*`)).length > 0 && (await redis.lindex(queueKey, 0)) !== entry);
  };

  /** Runs `body` with the replica stalled. */
  async function replicaPaused<T>(body: () => Promise<T>): Promise<T> {
    replica.pause();
    try {
      return await body();
    } finally {
      replica.resume();
    }
  }

  /** Every grant announced to any instance from now on (the hand-offs). */
  async function announcedGrants(): Promise<{ announced: string[]; close(): void }> {
    const grants = new Redis(primary.url);
    const announced: string[] = [];
    grants.on('pmessage', (_pattern: string, _channel: string, message: string) => announced.push(message));
    await grants.psubscribe(`${prefix}#granted:*`);
    return { announced, close: () => grants.disconnect() };
  }

  it('refuses a single attempt the replica did not acknowledge, plain and shaped, and gives the grant back', async () => {
    const store = openStore();
    const [plain, shaped] = await replicaPaused(() =>
      Promise.all([
        store.acquire('single', randomUUID(), 20_000, 'test').catch((error: unknown) => error),
        store.acquireShared('single:rw', { mode: 'read' }, randomUUID(), 20_000, 'test').catch((error: unknown) => error),
      ]),
    );
    for (const failure of [plain, shaped]) {
      expect(failure).toBeInstanceOf(LockStoreUnavailableError);
      expect(String((failure as Error).cause)).toMatch(UNACKNOWLEDGED);
    }
    expect(await redis.exists(layout.lockKey('single'), layout.lockKey('single:rw'))).toBe(0);
  });

  it('refuses a queued grant made by the waiter’s own join when the replica did not acknowledge it, and gives it back', async () => {
    const store = openStore();
    const failure = await replicaPaused(() => store.acquireQueued!(request('joined', 1_200)).catch((error: unknown) => error));
    expect(failure).toBeInstanceOf(LockStoreUnavailableError);
    expect(String((failure as Error).cause)).toMatch(UNACKNOWLEDGED_IN_LINE);
    expect(await redis.exists(layout.lockKey('joined'))).toBe(0);
  });

  it('refuses a hand-off written by another instance’s release when the replica did not acknowledge it, and gives it back', async () => {
    const [holderStore, waiterStore] = [openStore(), openStore()];
    const holder = request('handed', 0);
    expect((await holderStore.acquire('handed', holder.token, 20_000, 'holder')).acquired).toBe(true);
    const waiting = waiterStore.acquireQueued!(request('handed', 3_000)).catch((error: unknown) => error);
    await queued('handed', 1);
    await listening('handed');
    const { announced, close } = await announcedGrants();
    try {
      const failure = await replicaPaused(async () => {
        await holderStore.release('handed', holder.token, 0);
        return waiting;
      });
      // The key was handed to the waiter (announced to it), and the grant refused all the same: released,
      // and retried within the wait (as a plain waiter retries an unacknowledged grant) until its deadline.
      await spinUntil(() => announced.length > 0);
      expect(announced).toContainEqual(expect.stringMatching(/^g\|/));
      expect(failure).toBeInstanceOf(LockStoreUnavailableError);
      expect(String((failure as Error).cause)).toMatch(UNACKNOWLEDGED_IN_LINE);
      expect(await redis.exists(layout.lockKey('handed'))).toBe(0);
    } finally {
      close();
    }
  });

  it('refuses a shaped hand-off (a reader handed the key by a writer’s release) the replica did not acknowledge', async () => {
    const [writerStore, readerStore] = [openStore(), openStore()];
    const writer = request('shaped', 0);
    expect((await writerStore.acquireShared('shaped', { mode: 'write' }, writer.token, 20_000, 'writer')).acquired).toBe(true);
    const reading = readerStore.acquireSharedQueued!(request('shaped', 3_000), { mode: 'read' }).catch((error: unknown) => error);
    await queued('shaped', 1, true);
    await listening('shaped', true);
    const failure = await replicaPaused(async () => {
      await writerStore.release('shaped', writer.token, 0);
      return reading;
    });
    expect(failure).toBeInstanceOf(LockStoreUnavailableError);
    expect(String((failure as Error).cause)).toMatch(UNACKNOWLEDGED_IN_LINE);
    expect(await readerStore.list('shaped')).toEqual([]);
  });

  it('counts an acknowledged hand-off’s lease from the confirmation, for the whole lease, not the heartbeat-long hand-off', async () => {
    const [holderStore, waiterStore] = [openStore(), openStore()];
    const holder = request('lease', 0);
    expect((await holderStore.acquire('lease', holder.token, 20_000, 'holder')).acquired).toBe(true);
    const waiting = waiterStore.acquireQueued!(request('lease', 30_000, 20_000));
    await queued('lease', 1);
    await listening('lease');
    const releasedAt = Date.now();
    await holderStore.release('lease', holder.token, 0);
    const outcome = await waiting;
    expect(outcome.result.acquired).toBe(true);
    // The confirmation renewed the hold to the whole lease, and it was sent after the hand-off: the local
    // deadline (leaseStartedAt + leaseMs) comes before the key's expiry.
    expect(outcome.grantedTtlMs).toBeUndefined();
    expect(outcome.leaseStartedAt).toBeGreaterThanOrEqual(releasedAt);
    expect(await redis.pttl(layout.lockKey('lease'))).toBeGreaterThan(outcome.leaseStartedAt + 20_000 - Date.now() - 1);
  });

  describe('a module with fair: true and replicas: 1', () => {
    let apps: LockApp[] = [];
    afterAll(async () => {
      await Promise.all(apps.map((app) => app.close()));
    });

    it('starts, and grants waiters of several applications in queue order while the replica acknowledges', async () => {
      apps = await Promise.all([0, 1, 2, 3].map((i) => createLockApp({ redis: primary.url, keyPrefix: prefix, fair: true, replicas: 1, holder: `app-${i}` })));
      await expectHandedOnInArrivalOrder(apps, 'fifo', (length) => queued('fifo', length));
    });
  });
});
