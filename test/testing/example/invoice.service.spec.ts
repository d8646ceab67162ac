// The example of docs/testing.md: a user's unit test of a service with locked methods, written against the
// public entry points only, as in an application's own repository.
import { Test, type TestingModule } from '@nestjs/testing';
import { LeaseLostError, LockNotAcquiredError, LockStoreUnavailableError } from 'nestjs-distributed-lock';
import { LockTestingModule, LockTestKit } from 'nestjs-distributed-lock/testing';
import { InvoiceService } from './invoice.service';

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('InvoiceService (example: testing a locked service with nestjs-distributed-lock/testing)', () => {
  let moduleRef: TestingModule;
  let invoices: InvoiceService;
  let kit: LockTestKit;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      // The real lock module on the in-process memory store; its own prefix keeps this file's keys apart.
      imports: [LockTestingModule.forRoot({ keyPrefix: 'invoice-example:' })],
      providers: [InvoiceService],
    }).compile();
    await moduleRef.init(); // binds the @DistributedLock methods to this module's LockService
    invoices = moduleRef.get(InvoiceService);
    kit = moduleRef.get(LockTestKit);
  });

  afterEach(() => moduleRef.close());

  it('bills under the customer lock, with a fencing token for the writes', async () => {
    const run = await invoices.bill('c-1');
    expect(run).toMatchObject({ customerId: 'c-1', lines: 1 });
    expect(run.fencingToken).toBeGreaterThan(0);
    expect(kit.recorded('acquired', { key: 'invoice:c-1' })).toHaveLength(1);
    expect(await kit.inspect('invoice:c-1')).toBeNull(); // released after the call
  });

  it('fails with LockNotAcquiredError while another instance bills the same customer', async () => {
    const other = await kit.holdFromAnotherInstance('invoice:c-2');
    await expect(invoices.bill('c-2')).rejects.toThrow(LockNotAcquiredError);
    await other.release();
    await expect(invoices.bill('c-2')).resolves.toMatchObject({ customerId: 'c-2' });
  });

  it('skips the nightly run when another instance already runs it', async () => {
    await using _other = await kit.holdFromAnotherInstance('invoice:nightly');
    await expect(invoices.nightly()).resolves.toBeUndefined();
  });

  it('does not bill when the lock store is down (fail closed)', async () => {
    invoices.work = jest.fn(async () => 1);
    using _outage = kit.failAcquires();
    await expect(invoices.bill('c-3')).rejects.toThrow(LockStoreUnavailableError);
    expect(invoices.work).not.toHaveBeenCalled();
  });

  it('ends in LeaseLostError, with the signal aborted, when the lease is lost mid-run', async () => {
    const started = deferred<AbortSignal>();
    const finish = deferred();
    invoices.work = async (_customer, signal) => {
      started.resolve(signal);
      await finish.promise;
      return 3;
    };
    const billing = invoices.bill('c-4');
    const signal = await started.promise;

    await kit.loseLease('invoice:c-4');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LeaseLostError);
    finish.resolve();
    await expect(billing).rejects.toThrow(LeaseLostError);
  });
});
