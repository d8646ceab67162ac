import { ConflictException, Injectable } from '@nestjs/common';
import { DistributedLock, LockService, LockStore } from '../../lib/index';
import { redisLock, startLockedApp, type LockedApp } from '../decorator/locked-app';
import { testPrefix } from '../support/test-prefix';

const PREFIX = testPrefix(__filename);

class InsufficientFunds extends Error {
  readonly code = 'INSUFFICIENT_FUNDS';
}

@Injectable()
class PaymentService {
  constructor(readonly locks: LockService) {}

  failure: unknown;

  @DistributedLock('payment:{id}')
  async pay(id: string): Promise<string> {
    if (this.failure) throw this.failure;
    return `paid ${id}`;
  }
}

describe('errors thrown by a locked method', () => {
  let app: LockedApp;
  let payments: PaymentService;

  beforeAll(async () => {
    app = await startLockedApp({ lock: redisLock(PREFIX), providers: [PaymentService] });
    payments = app.get(PaymentService);
  });

  afterAll(() => app?.close());

  afterEach(() => {
    payments.failure = undefined;
    jest.restoreAllMocks();
  });

  it.each([
    ['a custom error class', new InsufficientFunds('balance too low')],
    ['a Nest HttpException (same status)', new ConflictException('duplicate payment')],
    ['a non-Error value', 'plain string'],
  ])('reach the caller unchanged: %s', async (_name, failure) => {
    payments.failure = failure;
    const error = await payments.pay('p1').catch((e: unknown) => e);
    expect(error).toBe(failure);
    // ... and the lock was released.
    await expect(app.get<LockStore>(LockStore).inspect('payment:p1')).resolves.toBeNull();
  });

  it('keep their place when the release afterwards fails: the failure is reported as an event', async () => {
    const failure = new InsufficientFunds('balance too low');
    payments.failure = failure;
    const store = app.get<LockStore>(LockStore);
    jest.spyOn(store, 'release').mockRejectedValueOnce(new Error('connection reset during release'));
    const releaseFailed = app.next('release-failed', (event) => event.key === 'payment:p2');
    await expect(payments.pay('p2')).rejects.toBe(failure);
    await expect(releaseFailed).resolves.toMatchObject({ key: 'payment:p2', error: expect.objectContaining({ message: 'connection reset during release' }) });
  });

  it('a failed release after success does not turn the result into an error', async () => {
    const store = app.get<LockStore>(LockStore);
    jest.spyOn(store, 'release').mockRejectedValueOnce(new Error('connection reset during release'));
    const releaseFailed = app.next('release-failed', (event) => event.key === 'payment:p3');
    await expect(payments.pay('p3')).resolves.toBe('paid p3');
    await releaseFailed;
  });
});
