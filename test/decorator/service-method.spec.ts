import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { DistributedLock, LockNotAcquiredError, LockService, LockStore } from '../../lib/index';
import { testPrefix } from '../support/test-prefix';
import { gate, inspectionClient, redisLock, startLockedApp, type LockedApp } from './locked-app';

const PREFIX = testPrefix(__filename);
const DATA = Symbol('data redis');

@Injectable()
class CounterService {
  constructor(@Inject(DATA) private readonly redis: Redis) {}

  /** Read-modify-write with a yield in between: lost updates unless calls are mutually excluded. */
  @DistributedLock({ key: 'counter:{name}', waitMs: 30_000 })
  async increment(name: string): Promise<void> {
    const value = Number((await this.redis.get(`${PREFIX}data:${name}`)) ?? 0);
    await new Promise((resolve) => setImmediate(resolve));
    await this.redis.set(`${PREFIX}data:${name}`, value + 1);
  }
}

@Injectable()
class OrderService {
  readonly calls: string[] = [];
  hooks = new Map<string, () => Promise<void>>();

  constructor(readonly locks: LockService) {}

  @DistributedLock({ key: 'order:{orderId}', waitMs: 10_000, leaseMs: 5_000 })
  async pay(orderId: string, amount: number): Promise<{ self: unknown; key?: string; fencingToken?: number; aborted?: boolean; amount: number }> {
    this.calls.push(`pay:${orderId}`);
    const lease = this.locks.current();
    await this.hooks.get(orderId)?.();
    return { self: this, key: lease?.key, fencingToken: lease?.fencingToken, aborted: lease?.signal.aborted, amount };
  }

  /** Not locked itself: reaches the lock only through `this.pay()`. */
  async payViaSelf(orderId: string): Promise<string | undefined> {
    return (await this.pay(orderId, 1)).key;
  }

  @DistributedLock('order:{orderId}', { waitMs: 0 })
  async payOnce(orderId: string): Promise<string> {
    this.calls.push(`payOnce:${orderId}`);
    return 'paid';
  }

  @DistributedLock('order:{orderId}', { waitMs: 0, onLocked: 'skip' })
  async paySkipping(orderId: string): Promise<string> {
    this.calls.push(`paySkipping:${orderId}`);
    return 'paid';
  }

  @DistributedLock('order:{orderId}', {
    waitMs: 0,
    onLocked(this: OrderService, orderId: string, note: string) {
      return { fallback: true, orderId, note, self: this };
    },
  })
  async payWithFallback(orderId: string, note: string): Promise<unknown> {
    this.calls.push(`payWithFallback:${orderId}`);
    return { fallback: false };
  }

  @DistributedLock('order:{orderId}', {
    waitMs: 0,
    onLocked: () => {
      throw new Error('fallback failed');
    },
  })
  async payWithFailingFallback(orderId: string): Promise<void> {
    this.calls.push(`payWithFailingFallback:${orderId}`);
  }

  /** Skips when its own key is taken, but must not swallow the LockNotAcquiredError of a nested call. */
  @DistributedLock('batch:{batchId}', { waitMs: 0, onLocked: 'skip' })
  async settleBatch(batchId: string, orderId: string): Promise<string> {
    return this.payOnce(orderId);
  }

  @DistributedLock('order:{orderId}')
  async payWithModuleDefaults(orderId: string): Promise<void> {
    this.calls.push(`payWithModuleDefaults:${orderId}`);
  }
}

describe('@DistributedLock on a service method (real Redis, real Nest apps)', () => {
  let first: LockedApp;
  let second: LockedApp;
  let data: Redis;

  beforeAll(async () => {
    data = inspectionClient();
    const providers = [CounterService, OrderService, { provide: DATA, useValue: data }];
    first = await startLockedApp({ lock: redisLock(PREFIX), providers });
    second = await startLockedApp({ lock: redisLock(PREFIX, { waitMs: 0 }), providers });
  });

  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    data?.disconnect();
  });

  it('mutually excludes read-modify-write across two applications: 40 increments give exactly 40', async () => {
    const calls = Array.from({ length: 40 }, (_, i) => (i % 2 ? first : second).get(CounterService).increment('c1'));
    await Promise.all(calls);
    expect(Number(await data.get(`${PREFIX}data:c1`))).toBe(40);
  });

  it('preserves this and gives each concurrent call its own lease through LockService.current()', async () => {
    const orders = first.get(OrderService);
    const [a, b] = await Promise.all([orders.pay('A', 1), orders.pay('B', 2)]);
    expect(a).toEqual({ self: orders, key: 'order:A', fencingToken: expect.any(Number), aborted: false, amount: 1 });
    expect(b).toEqual({ self: orders, key: 'order:B', fencingToken: expect.any(Number), aborted: false, amount: 2 });
    expect(orders.locks.current()).toBeUndefined();
  });

  it('lets calls on different keys hold their locks at the same time', async () => {
    const orders = first.get(OrderService);
    const inX = gate();
    const inY = gate();
    // Each call waits inside its lock until the other is inside its own: only possible if both hold at once.
    orders.hooks.set('X', async () => (inX.open(), inY.promise));
    orders.hooks.set('Y', async () => (inY.open(), inX.promise));
    await Promise.all([orders.pay('X', 1), orders.pay('Y', 1)]);
  });

  it('locks this.method() self-calls', async () => {
    const orders = first.get(OrderService);
    await expect(orders.payViaSelf('self-1')).resolves.toBe('order:self-1');
    const held = await first.get(LockService).acquire('order:self-2');
    try {
      const waiting = orders.payViaSelf('self-2');
      await first.next('contention', (event) => event.key === 'order:self-2');
      expect(orders.calls).not.toContain('pay:self-2');
      await held.release();
      await expect(waiting).resolves.toBe('order:self-2');
    } finally {
      await held.release();
    }
  });

  it("onLocked 'throw' (default) rejects with LockNotAcquiredError and does not run the method", async () => {
    const orders = first.get(OrderService);
    const held = await first.get(LockService).acquire('order:busy-1');
    try {
      const error = await orders.payOnce('busy-1').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockNotAcquiredError);
      expect(error).toMatchObject({ key: 'order:busy-1', code: 'LOCK_NOT_ACQUIRED' });
      expect(orders.calls).not.toContain('payOnce:busy-1');
    } finally {
      await held.release();
    }
  });

  it("onLocked 'skip' resolves undefined without running the method", async () => {
    const orders = first.get(OrderService);
    const held = await first.get(LockService).acquire('order:busy-2');
    try {
      await expect(orders.paySkipping('busy-2')).resolves.toBeUndefined();
      expect(orders.calls).not.toContain('paySkipping:busy-2');
    } finally {
      await held.release();
    }
    await expect(orders.paySkipping('busy-2')).resolves.toBe('paid');
  });

  it('onLocked fallback is called with the same this and arguments and its result is returned', async () => {
    const orders = first.get(OrderService);
    const held = await first.get(LockService).acquire('order:busy-3');
    try {
      await expect(orders.payWithFallback('busy-3', 'n1')).resolves.toEqual({ fallback: true, orderId: 'busy-3', note: 'n1', self: orders });
      await expect(orders.payWithFailingFallback('busy-3')).rejects.toThrow('fallback failed');
      expect(orders.calls).not.toContain('payWithFallback:busy-3');
      expect(orders.calls).not.toContain('payWithFailingFallback:busy-3');
    } finally {
      await held.release();
    }
  });

  it("applies onLocked only to the call's own key: a nested call's LockNotAcquiredError passes through 'skip'", async () => {
    const orders = first.get(OrderService);
    const held = await first.get(LockService).acquire('order:busy-4');
    try {
      await expect(orders.settleBatch('b1', 'busy-4')).rejects.toMatchObject({ name: 'LockNotAcquiredError', key: 'order:busy-4' });
    } finally {
      await held.release();
    }
  });

  it('takes unset options from the module and set ones from the decorator', async () => {
    // `second` was configured with waitMs: 0; the decorator sets no waitMs.
    const orders = second.get(OrderService);
    const held = await first.get(LockService).acquire('order:defaults');
    try {
      await expect(orders.payWithModuleDefaults('defaults')).rejects.toBeInstanceOf(LockNotAcquiredError);
    } finally {
      await held.release();
    }
    // The decorator's leaseMs (5000) wins over the module's (30000): the key's TTL is bounded by it.
    const store = first.get<LockStore>(LockStore);
    let ttlMs: number | undefined;
    first.get(OrderService).hooks.set('lease', async () => {
      ttlMs = (await store.inspect('order:lease'))?.ttlMs;
    });
    await first.get(OrderService).pay('lease', 1);
    expect(ttlMs).toBeGreaterThan(0);
    expect(ttlMs).toBeLessThanOrEqual(5_000);
  });
});
