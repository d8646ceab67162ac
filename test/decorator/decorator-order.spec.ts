import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, SetMetadata } from '@nestjs/common';
import { DistributedLock, LockNotAcquiredError, LockService } from '../../lib/index';
import { testPrefix } from '../support/test-prefix';
import { redisLock, startLockedApp, type LockedApp } from './locked-app';

const PREFIX = testPrefix(__filename);
const TRANSACTION_OPTIONS = Symbol('transaction options');

/** Where the test's @Transactional looks for the lease, to record whether the lock was taken before it. */
let locksOfApp: LockService | undefined;
const transaction = new AsyncLocalStorage<{ id: number; leaseHeldAtBegin: boolean }>();
let transactions = 0;

/**
 * A method-wrapping decorator in the style of nestjs-cls' @Transactional: it replaces the method with a
 * wrapper that opens a "transaction" context, copies the metadata of the function it wraps, and adds its own.
 */
function Transactional(): MethodDecorator {
  return (_target, _key, descriptor: PropertyDescriptor) => {
    const inner = descriptor.value as (...args: unknown[]) => Promise<unknown>;
    const wrapper = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const context = { id: ++transactions, leaseHeldAtBegin: locksOfApp?.current() !== undefined };
      return transaction.run(context, () => inner.apply(this, args));
    };
    Object.defineProperty(wrapper, 'name', { value: inner.name });
    Object.defineProperty(wrapper, 'length', { value: inner.length });
    for (const key of Reflect.getOwnMetadataKeys(inner)) Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, inner), wrapper);
    Reflect.defineMetadata(TRANSACTION_OPTIONS, { propagation: 'REQUIRED' }, wrapper);
    descriptor.value = wrapper;
    return descriptor;
  };
}

/** A wrapper that copies nothing: neither metadata, nor name, nor length. */
function Careless(): MethodDecorator {
  return (_target, _key, descriptor: PropertyDescriptor) => {
    const inner = descriptor.value as (...args: unknown[]) => unknown;
    descriptor.value = function (this: unknown, ...args: unknown[]): unknown {
      return inner.apply(this, args);
    };
    return descriptor;
  };
}

interface Observed {
  self: unknown;
  key: string | undefined;
  transaction: number | undefined;
  leaseHeldAtTransactionBegin: boolean | undefined;
}

@Injectable()
class LedgerService {
  constructor(private readonly locks: LockService) {}

  private observe(): Observed {
    const tx = transaction.getStore();
    return { self: this, key: this.locks.current()?.key, transaction: tx?.id, leaseHeldAtTransactionBegin: tx?.leaseHeldAtBegin };
  }

  @SetMetadata('audit', 'debit')
  @Transactional()
  @DistributedLock('account:{accountId}', { waitMs: 0 })
  @SetMetadata('role', 'teller')
  async debitInTransaction(accountId: string, amount: number): Promise<Observed> {
    return this.observe();
  }

  @SetMetadata('audit', 'credit')
  @DistributedLock('account:{accountId}', { waitMs: 0 })
  @Transactional()
  @SetMetadata('role', 'teller')
  async creditUnderLock(accountId: string, amount: number): Promise<Observed> {
    return this.observe();
  }

  @Careless()
  @DistributedLock('account:{accountId}', { waitMs: 0 })
  async carelesslyWrapped(accountId: string): Promise<Observed> {
    return this.observe();
  }
}

describe('@DistributedLock together with another method-wrapping decorator', () => {
  let app: LockedApp;
  const proto = LedgerService.prototype;

  beforeAll(async () => {
    app = await startLockedApp({ lock: redisLock(PREFIX), providers: [LedgerService] });
    locksOfApp = app.get(LockService);
  });

  afterAll(() => app?.close());

  it('keeps the metadata of decorators above and below, in both orders', () => {
    for (const [method, audit] of [
      [proto.debitInTransaction, 'debit'],
      [proto.creditUnderLock, 'credit'],
    ] as const) {
      expect(Reflect.getMetadata('audit', method)).toBe(audit);
      expect(Reflect.getMetadata('role', method)).toBe('teller');
      expect(Reflect.getMetadata(TRANSACTION_OPTIONS, method)).toEqual({ propagation: 'REQUIRED' });
    }
  });

  it('keeps name and length in both orders', () => {
    expect([proto.debitInTransaction.name, proto.debitInTransaction.length]).toEqual(['debitInTransaction', 2]);
    expect([proto.creditUnderLock.name, proto.creditUnderLock.length]).toEqual(['creditUnderLock', 2]);
  });

  it('transaction outside the lock: both wrappers run, the lock is taken inside the transaction', async () => {
    const ledger = app.get(LedgerService);
    const observed = await ledger.debitInTransaction('a1', 10);
    expect(observed).toEqual({ self: ledger, key: 'account:a1', transaction: expect.any(Number), leaseHeldAtTransactionBegin: false });
  });

  it('lock outside the transaction: both wrappers run, the transaction begins under the lock', async () => {
    const ledger = app.get(LedgerService);
    // The key template reads parameter names from the method as written, not from the (...args) wrapper.
    const observed = await ledger.creditUnderLock('a2', 10);
    expect(observed).toEqual({ self: ledger, key: 'account:a2', transaction: expect.any(Number), leaseHeldAtTransactionBegin: true });
  });

  it('still locks when a wrapper above drops all metadata (startup finds locked methods on the class)', async () => {
    const ledger = app.get(LedgerService);
    await expect(ledger.carelesslyWrapped('a3')).resolves.toMatchObject({ self: ledger, key: 'account:a3' });
    const held = await app.get(LockService).acquire('account:a3');
    try {
      await expect(ledger.carelesslyWrapped('a3')).rejects.toBeInstanceOf(LockNotAcquiredError);
    } finally {
      await held.release();
    }
  });

  it('excludes concurrent calls in both orders', async () => {
    const ledger = app.get(LedgerService);
    for (const call of [(id: string) => ledger.debitInTransaction(id, 1), (id: string) => ledger.creditUnderLock(id, 1)]) {
      const held = await app.get(LockService).acquire('account:busy');
      try {
        await expect(call('busy')).rejects.toBeInstanceOf(LockNotAcquiredError);
      } finally {
        await held.release();
      }
    }
  });
});
