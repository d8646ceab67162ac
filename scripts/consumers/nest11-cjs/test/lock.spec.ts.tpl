import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { DistributedLockModule, LockModule, type Lease } from 'nestjs-distributed-lock';
import { ReportJob } from '../src/report.job';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('nestjs-distributed-lock in a Nest 11 CommonJS app', () => {
  let app: TestingModule;
  let redis: Redis;

  beforeAll(async () => {
    app = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ redis: process.env.REDIS_URL, keyPrefix: 'consumer11:' })],
      providers: [ReportJob],
    }).compile();
    await app.init();
    // A client of our own, to see the lock where other instances would: in Redis, under our prefix.
    redis = new Redis(process.env.REDIS_URL!);
  });

  afterAll(async () => {
    await app?.close();
    redis?.disconnect();
  });

  it('resolves the package to its CommonJS build, with LockModule as an alias', () => {
    expect(require.resolve('nestjs-distributed-lock')).toMatch(/[\\/]dist[\\/]cjs[\\/]index\.js$/);
    expect(LockModule).toBe(DistributedLockModule);
  });

  it('holds the key under a fenced lease that a concurrent tryAcquire cannot take, then frees it', async () => {
    const job = app.get(ReportJob);
    const entered = deferred<Lease>();
    const finish = deferred<void>();
    const done = job.run(async (lease) => {
      entered.resolve(lease);
      await finish.promise;
      return lease.fencingToken;
    });

    // Probing from here, not from inside `work`: inside, the same call chain would be a re-entry, not a rival.
    const lease = await entered.promise;
    try {
      expect(Number.isSafeInteger(lease.fencingToken)).toBe(true);
      expect(lease.fencingToken).toBeGreaterThan(0);
      expect(await redis.exists('consumer11:k')).toBe(1);
      expect(await job.tryStart()).toBeNull();
    } finally {
      finish.resolve();
    }

    expect(await done).toBe(lease.fencingToken);
    expect(lease.held).toBe(false);
    const next = await job.tryStart();
    expect(next).not.toBeNull();
    expect(next!.fencingToken).toBeGreaterThan(lease.fencingToken);
    await next!.release();
  });
});
