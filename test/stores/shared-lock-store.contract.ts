import { randomBytes } from 'node:crypto';
import type { AcquireResult, LockShape, LockStore } from '../../lib/index';
import type { ContractSubject } from './lock-store.contract';

const token = (): string => randomBytes(16).toString('base64url');
const READ: LockShape = { mode: 'read' };
const WRITE: LockShape = { mode: 'write' };
const permits = (n: number): LockShape => ({ permits: n });

/** Polls a condition the store exposes (not a guessed sleep): used only to observe a TTL running out. */
async function eventually(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
}

function fence(result: AcquireResult): number {
  if (!result.acquired) throw new Error(`expected a grant, got a denial (holder TTL ${result.ttlMs} ms)`);
  return result.fencingToken;
}

/** Where a store departs from the contract, said by the store's own spec. */
export interface SharedContractOptions {
  /**
   * How a waiting writer keeps new readers out (writer preference):
   * - `'single-attempts'`: a writer's single attempt turned away with `waitingMs > 0` keeps new readers
   *   out for that long, and each attempt of the same token starts it anew (Redis, PostgreSQL, memory:
   *   their waiters retry `acquireShared`). Only readers: other writers are not kept out by it.
   * - `'queue'`: only a writer waiting in the store's own queue (`acquireSharedQueued`) keeps them out; a
   *   single attempt keeps nobody out, whatever its `waitingMs` (etcd and ZooKeeper, whose waiting writers
   *   LockService always queues).
   * @default 'single-attempts'
   */
  readonly waitingWriters?: 'single-attempts' | 'queue';
}

/**
 * The contract of `LockStore.acquireShared`, one section per shape: read/write locks and semaphores, as
 * every store that offers them keeps it (the Redis, PostgreSQL, etcd, ZooKeeper and memory stores run it).
 */
export function describeSharedLockStoreContract(name: string, create: () => Promise<ContractSubject>, contract: SharedContractOptions = {}): void {
  describe(`${name} keeps the shared lock contract`, () => {
    let subject: ContractSubject;
    let store: LockStore;
    let n = 0;
    const key = (): string => `shared-contract:${process.pid}:${++n}`;
    const take = (k: string, shape: LockShape, t = token(), leaseMs = 10_000, holder = 'test'): Promise<AcquireResult> =>
      store.acquireShared!(k, shape, t, leaseMs, holder);

    beforeAll(async () => {
      subject = await create();
      store = subject.store;
      expect(typeof store.acquireShared).toBe('function');
    });
    afterAll(async () => {
      await store.close();
      await subject.cleanup?.();
    });

    describe('read/write locks', () => {
      it('grants readers together, each its own fencing token, increasing', async () => {
        const k = key();
        const first = fence(await take(k, READ));
        const second = fence(await take(k, READ));
        expect(second).toBeGreaterThan(first);
      });

      it('turns a writer away while a reader holds, and a reader while a writer holds, with the holder TTL', async () => {
        const read = key();
        await take(read, READ);
        const writer = await take(read, WRITE);
        expect(writer.acquired).toBe(false);
        if (!writer.acquired) expect(writer.ttlMs).toBeGreaterThan(0);
        const write = key();
        await take(write, WRITE);
        expect((await take(write, READ)).acquired).toBe(false);
        expect((await take(write, WRITE)).acquired).toBe(false);
      });

      if (contract.waitingWriters === 'queue') {
        /** A writer waiting in the store's queue; `queued` resolves once it keeps readers out. */
        const queuedWriter = async (k: string, signal?: AbortSignal) => {
          const writer = token();
          const outcome = store.acquireSharedQueued!({ key: k, token: writer, leaseMs: 10_000, holder: 'test', deadline: Date.now() + 60_000, signal }, WRITE);
          // A reader let in before the writer queued would hold ahead of it: each probe gives its grant back.
          await eventually(async () => {
            const probe = token();
            const read = await take(k, READ, probe);
            if (read.acquired) await store.release(k, probe, 0);
            return !read.acquired;
          });
          return { writer, outcome };
        };

        it('keeps new readers out once a writer waits in the queue (writer-preferring), and lets them in after the writer', async () => {
          const k = key();
          const reader = token();
          await take(k, READ, reader);
          const { writer, outcome } = await queuedWriter(k);
          expect((await take(k, READ)).acquired).toBe(false);
          expect(await store.release(k, reader, 0)).toBe(true);
          const written = (await outcome).result;
          expect(written.acquired).toBe(true);
          expect(await store.release(k, writer, 0)).toBe(true);
          expect(fence(await take(k, READ))).toBeGreaterThan(fence(written));
        });

        it('keeps readers out only while a writer waits in the queue: never for a single attempt, whatever its waitingMs, and not once the writer gave up', async () => {
          const k = key();
          await take(k, READ);
          expect((await take(k, { mode: 'write', waitingMs: 0 })).acquired).toBe(false);
          expect((await take(k, READ)).acquired).toBe(true);
          expect((await take(k, { mode: 'write', waitingMs: 10_000 })).acquired).toBe(false);
          expect((await take(k, READ)).acquired).toBe(true);
          const gaveUp = new AbortController();
          const { outcome } = await queuedWriter(k, gaveUp.signal);
          gaveUp.abort(new Error('the caller gave up'));
          await expect(outcome).rejects.toThrow('the caller gave up');
          await eventually(async () => (await take(k, READ)).acquired);
        });
      } else {
        it('keeps new readers out once a writer waits (writer-preferring), and lets them in after the writer', async () => {
          const k = key();
          const reader = token();
          await take(k, READ, reader);
          const writer = token();
          expect((await take(k, WRITE, writer)).acquired).toBe(false);
          expect((await take(k, READ)).acquired).toBe(false);
          expect(await store.release(k, reader, 0)).toBe(true);
          const written = fence(await take(k, WRITE, writer));
          expect(await store.release(k, writer, 0)).toBe(true);
          expect(fence(await take(k, READ))).toBeGreaterThan(written);
        });

        it('keeps readers out only while a turned-away writer goes on asking: not for a single attempt, and not past its waiting bound', async () => {
          const k = key();
          await take(k, READ);
          expect((await take(k, { mode: 'write', waitingMs: 0 })).acquired).toBe(false);
          expect((await take(k, READ)).acquired).toBe(true);
          expect((await take(k, { mode: 'write', waitingMs: 30 })).acquired).toBe(false);
          expect((await take(k, READ)).acquired).toBe(false);
          await eventually(async () => (await take(k, READ)).acquired);
        });
      }

      it('fences every grant of the key above every earlier one, in either mode and a plain lock', async () => {
        const k = key();
        const seen: number[] = [];
        for (const shape of [READ, WRITE, READ, WRITE]) {
          const t = token();
          seen.push(fence(await take(k, shape, t)));
          await store.release(k, t, 0);
        }
        const plain = token();
        seen.push(fence(await store.acquire(k, plain, 10_000, 'test')));
        await store.release(k, plain, 0);
        seen.push(fence(await take(k, READ)));
        expect(seen).toEqual([...seen].sort((a, b) => a - b));
        expect(new Set(seen).size).toBe(seen.length);
      });

      it('renews and releases each reader by its own token, never another reader’s', async () => {
        const k = key();
        const [a, b] = [token(), token()];
        await take(k, READ, a);
        await take(k, READ, b);
        expect(await store.renew([{ key: k, token: a, leaseMs: 20_000 }, { key: k, token: token(), leaseMs: 20_000 }])).toEqual([true, false]);
        expect(await store.release(k, a, 0)).toBe(true);
        expect(await store.release(k, a, 0)).toBe(false);
        expect(await store.renew([{ key: k, token: a, leaseMs: 20_000 }, { key: k, token: b, leaseMs: 20_000 }])).toEqual([false, true]);
        // A turned-away writer keeps readers out, never the next writer.
        expect((await take(k, WRITE)).acquired).toBe(false);
        expect(await store.release(k, b, 0)).toBe(true);
        expect((await take(k, WRITE)).acquired).toBe(true);
      });

      it('loses a reader whose lease ran out on its own, the other readers keep theirs, and the writer gets in after the last', async () => {
        const k = key();
        const [short, long] = [token(), token()];
        await take(k, READ, short, 30);
        await take(k, READ, long, 10_000);
        await eventually(async () => (await store.list(k)).length === 1);
        expect(await store.renew([{ key: k, token: short, leaseMs: 10_000 }, { key: k, token: long, leaseMs: 10_000 }])).toEqual([false, true]);
        expect(await store.release(k, short, 0)).toBe(false);
        const writer = token();
        expect((await take(k, WRITE, writer)).acquired).toBe(false);
        await eventually(async () => (await take(k, WRITE, writer)).acquired);
      });

      it('grants a re-sent acquisition of a holding token again, under its own fencing token', async () => {
        const k = key();
        const t = token();
        const first = fence(await take(k, READ, t));
        expect(fence(await take(k, READ, t))).toBe(first);
      });

      it('keeps a plain lock and a shaped one on the same key apart', async () => {
        const plainFirst = key();
        await store.acquire(plainFirst, token(), 10_000, 'test');
        expect((await take(plainFirst, READ)).acquired).toBe(false);
        const readFirst = key();
        await take(readFirst, READ);
        const plain = await store.acquire(readFirst, token(), 10_000, 'test');
        expect(plain.acquired).toBe(false);
      });

      it('announces a reader’s release to the key’s waiters', async () => {
        const k = key();
        const reader = token();
        await take(k, READ, reader);
        let told!: () => void;
        const released = new Promise<void>((resolve) => (told = resolve));
        const stop = await store.onRelease(k, () => told());
        await store.release(k, reader, 0);
        await released;
        stop();
      });
    });

    describe('semaphores', () => {
      it('grants at most N holders at once, each its own increasing fencing token', async () => {
        const k = key();
        const tokens = [fence(await take(k, permits(3))), fence(await take(k, permits(3))), fence(await take(k, permits(3)))];
        expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
        const fourth = await take(k, permits(3));
        expect(fourth.acquired).toBe(false);
        if (!fourth.acquired) expect(fourth.ttlMs).toBeGreaterThan(0);
      });

      it('gives one permit back per release, by its token only', async () => {
        const k = key();
        const [a, b] = [token(), token()];
        await take(k, permits(2), a);
        await take(k, permits(2), b);
        expect(await store.release(k, token(), 0)).toBe(false);
        expect((await take(k, permits(2))).acquired).toBe(false);
        expect(await store.release(k, a, 0)).toBe(true);
        expect((await take(k, permits(2))).acquired).toBe(true);
        expect((await take(k, permits(2))).acquired).toBe(false);
      });

      it('gives a dead holder’s permit back once its lease ran out, never held by nobody', async () => {
        const k = key();
        await take(k, permits(1), token(), 1_000);
        const next = token();
        expect((await take(k, permits(1), next)).acquired).toBe(false);
        await eventually(async () => (await take(k, permits(1), next)).acquired);
        expect(await store.renew([{ key: k, token: next, leaseMs: 10_000 }])).toEqual([true]);
      });

      it('applies a changed N from the next grant: more get in when raised, none until below it when lowered', async () => {
        const k = key();
        const [a, b, c] = [token(), token(), token()];
        await take(k, permits(2), a);
        await take(k, permits(2), b);
        expect((await take(k, permits(2))).acquired).toBe(false);
        expect((await take(k, permits(3), c)).acquired).toBe(true);
        expect((await take(k, permits(2))).acquired).toBe(false);
        await store.release(k, a, 0);
        await store.release(k, b, 0);
        expect((await take(k, permits(1))).acquired).toBe(false);
        expect(await store.renew([{ key: k, token: c, leaseMs: 10_000 }])).toEqual([true]);
        await store.release(k, c, 0);
        expect((await take(k, permits(1))).acquired).toBe(true);
      });

      it('keeps permits and read/write holders of one key apart', async () => {
        const k = key();
        const holder = token();
        await take(k, permits(5), holder);
        expect((await take(k, READ)).acquired).toBe(false);
        await store.release(k, holder, 0);
        await take(k, READ);
        expect((await take(k, permits(5))).acquired).toBe(false);
        const other = key();
        await take(other, permits(5));
        expect((await take(other, WRITE)).acquired).toBe(false);
      });

      it('force-releases one hold by the fencing token the operator saw, refuses a token that holds nothing, and clears every hold without one', async () => {
        const k = key();
        const [a, b] = [token(), token()];
        const fenceA = fence(await take(k, permits(3), a));
        const fenceB = fence(await take(k, permits(3), b));
        const taken = await store.forceRelease(k, fenceA);
        expect(taken).toMatchObject({ released: true, lock: { key: k, fencingToken: fenceA } });
        expect(await store.renew([{ key: k, token: a, leaseMs: 10_000 }, { key: k, token: b, leaseMs: 10_000 }])).toEqual([false, true]);
        expect(await store.forceRelease(k, fenceA)).toMatchObject({ released: false, reason: 'fencing-mismatch', current: { fencingToken: fenceB } });
        await take(k, permits(3));
        expect((await store.forceRelease(k)).released).toBe(true);
        expect(await store.list(k)).toEqual([]);
        expect(await store.forceRelease(k)).toEqual({ released: false, reason: 'not-held' });
      });

      it('lists every holder of a shared key, each with its shape, token and TTL', async () => {
        const k = key();
        await take(k, permits(2), token(), 10_000, 'one');
        await take(k, permits(2), token(), 10_000, 'two');
        const held = await store.list(k);
        expect(held.map((lock) => [lock.key, lock.holder, lock.shape])).toEqual([
          [k, 'one', 'permits'],
          [k, 'two', 'permits'],
        ]);
        expect(held.every((lock) => lock.ttlMs > 0 && lock.fencingToken > 0)).toBe(true);
        expect((await store.inspect(k))?.shape).toBe('permits');
      });

      it('keeps a released permit for the minimum hold, then gives it back', async () => {
        const k = key();
        const holder = token();
        await take(k, permits(1), holder);
        expect(await store.release(k, holder, 1_000)).toBe(true);
        expect((await take(k, permits(1))).acquired).toBe(false);
        const next = token();
        await eventually(async () => (await take(k, permits(1), next)).acquired);
      });
    });
  });
}
