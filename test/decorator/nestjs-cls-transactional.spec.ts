import { Injectable } from '@nestjs/common';
import { ClsPluginTransactional, Transactional, TransactionHost, type TransactionalAdapter } from '@nestjs-cls/transactional';
import { ClsModule } from 'nestjs-cls';
import { DistributedLock, LockService } from '../../lib/index';
import { testPrefix } from '../support/test-prefix';
import { redisLock, startLockedApp, type LockedApp } from './locked-app';

const PREFIX = testPrefix(__filename);

interface FakeTx {
  readonly id: number;
}

/** Set once the app runs: the adapter records whether a lease was held when each transaction began. */
let locks: LockService | undefined;
const journal: string[] = [];
let transactions = 0;

/** A transactional adapter without a database: it only records begin/commit/rollback. */
const recordingAdapter: TransactionalAdapter<object, FakeTx, object> = {
  connection: {},
  optionsFactory: () => ({
    wrapWithTransaction: async (_options, fn, setTx) => {
      const tx = { id: ++transactions };
      journal.push(`begin ${tx.id} lease=${locks?.current()?.key ?? 'none'}`);
      setTx(tx);
      try {
        const result = await fn();
        journal.push(`commit ${tx.id}`);
        return result;
      } catch (error) {
        journal.push(`rollback ${tx.id}`);
        throw error;
      }
    },
    getFallbackInstance: () => ({ id: 0 }),
  }),
};

@Injectable()
class StockService {
  constructor(
    private readonly txHost: TransactionHost<typeof recordingAdapter>,
    private readonly lockService: LockService,
  ) {}

  @DistributedLock('sku:{sku}', { waitMs: 0 })
  @Transactional()
  async reserveLockOutside(sku: string, quantity: number): Promise<object> {
    return { tx: this.txHost.tx.id, key: this.lockService.current()?.key, quantity };
  }

  @Transactional()
  @DistributedLock('sku:{sku}', { waitMs: 0 })
  async reserveTransactionOutside(sku: string, quantity: number): Promise<object> {
    return { tx: this.txHost.tx.id, key: this.lockService.current()?.key, quantity };
  }
}

describe('@DistributedLock with the real @Transactional of @nestjs-cls/transactional (a Proxy-based wrapper)', () => {
  let app: LockedApp;

  beforeAll(async () => {
    app = await startLockedApp({
      lock: redisLock(PREFIX),
      imports: [ClsModule.forRoot({ global: true, plugins: [new ClsPluginTransactional({ adapter: recordingAdapter })] })],
      providers: [StockService],
    });
    locks = app.get(LockService);
  });

  afterAll(() => app?.close());

  beforeEach(() => {
    journal.length = 0;
  });

  it('lock above @Transactional: the transaction begins and commits inside the lock', async () => {
    const result = await app.get(StockService).reserveLockOutside('s1', 2);
    expect(result).toEqual({ tx: expect.any(Number), key: 'sku:s1', quantity: 2 });
    expect(journal).toEqual([expect.stringMatching(/^begin \d+ lease=sku:s1$/), expect.stringMatching(/^commit \d+$/)]);
  });

  it('@Transactional above the lock: the lock is taken inside the transaction', async () => {
    const result = await app.get(StockService).reserveTransactionOutside('s2', 3);
    expect(result).toEqual({ tx: expect.any(Number), key: 'sku:s2', quantity: 3 });
    expect(journal).toEqual([expect.stringMatching(/^begin \d+ lease=none$/), expect.stringMatching(/^commit \d+$/)]);
  });

  it('keeps name and length in both orders', () => {
    const proto = StockService.prototype;
    expect([proto.reserveLockOutside.name, proto.reserveLockOutside.length]).toEqual(['reserveLockOutside', 2]);
    expect([proto.reserveTransactionOutside.name, proto.reserveTransactionOutside.length]).toEqual(['reserveTransactionOutside', 2]);
  });
});
