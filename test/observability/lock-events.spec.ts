import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Injectable } from '@nestjs/common';
import {
  DistributedLock,
  LockConfigError,
  LockNotAcquiredError,
  LockService,
  LockStoreUnavailableError,
  trackTransaction,
  type LockAcquiredEvent,
} from '../../lib/index';
import { freePort } from '../../scripts/servers/redis-server';
import { startLockedApp } from '../decorator/locked-app';
import { createLockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';

@Injectable()
class InvoiceService {
  @DistributedLock({ key: 'invoice:{invoiceId}' })
  async send(invoiceId: string): Promise<string> {
    return invoiceId;
  }

  @DistributedLock({ key: (customerId: string) => `customer:${customerId}` })
  async merge(customerId: string): Promise<string> {
    return customerId;
  }

  @DistributedLock({ key: 'report:{day}', name: 'daily-report' })
  async report(day: string): Promise<string> {
    return day;
  }
}

describe('lock events', () => {
  const prefix = testPrefix(__filename);

  it('reports how every acquisition ended: granted, key taken, caller aborted, shutting down, store unavailable', async () => {
    const app = await createLockApp({ store: 'memory', keyPrefix: prefix, shutdownGraceMs: 0 });
    const held = await app.locks.acquire('k');
    expect(app.recorded('acquired')).toEqual([expect.objectContaining({ key: 'k', name: undefined, attempts: 1 })]);

    await expect(app.locks.acquire('k', { waitMs: 0 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(await app.locks.tryAcquire('k')).toBeNull();
    const abort = new AbortController();
    const aborted = app.locks.acquire('k', { signal: abort.signal });
    await app.next('contention', (e) => e.key === 'k');
    abort.abort(new Error('gave up'));
    await expect(aborted).rejects.toThrow('gave up');
    const waiting = app.locks.acquire('k', { waitMs: 30_000 });
    await app.next('contention', (e) => e.key === 'k');
    await app.close();
    await expect(waiting).rejects.toBeInstanceOf(LockStoreUnavailableError);
    await expect(app.locks.acquire('other')).rejects.toBeInstanceOf(LockStoreUnavailableError);
    expect(app.recorded('not-acquired').map((e) => [e.key, e.reason])).toEqual([
      ['k', 'taken'],
      ['k', 'taken'],
      ['k', 'aborted'],
      ['k', 'shutdown'],
      ['other', 'shutdown'],
    ]);
    expect(app.recorded('lost')).toEqual([expect.objectContaining({ key: 'k', reason: 'shutdown', fencingToken: held.fencingToken })]);

    const down = await createLockApp({ redis: `redis://127.0.0.1:${await freePort()}`, keyPrefix: prefix, commandTimeoutMs: 200 });
    try {
      await expect(down.locks.acquire('k', { waitMs: 0, name: 'probe' })).rejects.toBeInstanceOf(LockStoreUnavailableError);
      expect(down.recorded('store-unavailable')).toEqual([
        expect.objectContaining({ key: 'k', name: 'probe', attempts: 1, error: expect.any(LockStoreUnavailableError) }),
      ]);
      expect(down.recorded('not-acquired')).toEqual([]);
    } finally {
      await down.close();
    }
  });

  it('names a locked method’s lock by its key template, a key function’s by Class.method, or by its name option', async () => {
    const app = await startLockedApp({ lock: { store: 'memory', keyPrefix: prefix }, providers: [InvoiceService] });
    try {
      const invoices = app.get(InvoiceService);
      await invoices.send('7');
      await invoices.merge('c-1');
      await invoices.report('2024-06-01');
      await app.get(LockService).withLock('manual', { name: 'manual-scope' }, async () => undefined);
      const names = (events: Array<{ key: string; name: string | undefined }>) => events.map((e) => [e.key, e.name]);
      const expected = [
        ['invoice:7', 'invoice:{invoiceId}'],
        ['customer:c-1', 'InvoiceService.merge'],
        ['report:2024-06-01', 'daily-report'],
        ['manual', 'manual-scope'],
      ];
      expect(names(app.recorded('acquired'))).toEqual(expected);
      expect(names(app.recorded('released'))).toEqual(expected);
    } finally {
      await app.close();
    }
  });

  it('refuses an empty or non-string name: at startup on a locked method, at the call on LockService', async () => {
    @Injectable()
    class Misnamed {
      @DistributedLock({ key: 'x', name: '' })
      async run(): Promise<void> {}
    }
    await expect(startLockedApp({ lock: { store: 'memory', keyPrefix: prefix }, providers: [Misnamed] })).rejects.toThrow(
      /Invalid lock option "name of @DistributedLock on Misnamed.run"/,
    );
    const app = await createLockApp({ store: 'memory', keyPrefix: prefix });
    try {
      await expect(app.locks.acquire('x', { name: 42 as unknown as string })).rejects.toBeInstanceOf(LockConfigError);
      expect(app.recorded('acquired')).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('reports a release deferred to the transaction, then the release after it completed', async () => {
    const app = await createLockApp({ store: 'memory', keyPrefix: prefix });
    try {
      const order: string[] = [];
      app.events.on('deferred', (e) => order.push(`deferred ${e.key}`));
      app.events.on('released', (e) => order.push(`released ${e.key}`));
      await trackTransaction(
        async (work: () => Promise<void>) => {
          await work();
          order.push('commit');
        },
        () => app.locks.withLock('invoice:9', { name: 'invoice' }, async () => undefined),
      );
      expect(order).toEqual(['deferred invoice:9', 'commit', 'released invoice:9']);
      expect(app.recorded('deferred')).toEqual([expect.objectContaining({ key: 'invoice:9', name: 'invoice', heldMs: expect.any(Number) })]);
    } finally {
      await app.close();
    }
  });

  it('reports renewal latency and the hold time of a lost lease, and carries the token only as its digest', async () => {
    const app = await createLockApp({ store: 'memory', keyPrefix: prefix, leaseMs: 300 });
    try {
      const lease = await app.locks.acquire('ledger', { name: 'ledger' });
      const renewed = await app.next('renewed', (e) => e.key === 'ledger');
      expect(renewed.latencyMs).toBeGreaterThanOrEqual(0);
      const lost = app.next('lost', (e) => e.key === 'ledger');
      await app.store.forceRelease('ledger', lease.fencingToken);
      expect(await lost).toMatchObject({ reason: 'rejected', name: 'ledger', heldMs: expect.any(Number), renewLatencyMs: expect.any(Number) });
      await lease.release().catch(() => undefined);
      const everything = JSON.stringify([...app.recorded('acquired'), ...app.recorded('renewed'), ...app.recorded('lost')]);
      expect(everything).not.toContain(lease.token);
      expect(everything).toContain((app.recorded('acquired')[0] as LockAcquiredEvent).tokenDigest);
    } finally {
      await app.close();
    }
  });

  it('publishes the events on node:diagnostics_channel for subscribers outside Nest', async () => {
    const published: unknown[] = [];
    const onAcquired = (message: unknown): void => void published.push(message);
    subscribe('nestjs-distributed-lock:acquired', onAcquired);
    const app = await createLockApp({ store: 'memory', keyPrefix: prefix });
    try {
      await app.locks.withLock('channel', { name: 'channel-test' }, async () => undefined);
      expect(published.filter((e) => (e as LockAcquiredEvent).name === 'channel-test')).toEqual(app.recorded('acquired'));
    } finally {
      unsubscribe('nestjs-distributed-lock:acquired', onAcquired);
      await app.close();
    }
  });
});
