import { Inject, Injectable, type Type } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { DistributedLock, LockConfigError, LockService, LockStore } from '../../lib/index';
import { testPrefix } from '../support/test-prefix';
import { inspectionClient, redisLock, startLockedApp, type LockedApp } from './locked-app';

const PREFIX = testPrefix(__filename);
const DATA = Symbol('data redis');

@Injectable()
class AccountService {
  hook?: () => Promise<void>;
  runs = 0;

  constructor(
    @Inject(DATA) private readonly redis: Redis,
    readonly locks: LockService,
  ) {}

  /** Read-modify-write of both balances with a yield in between: lost updates unless calls are excluded. */
  @DistributedLock({ keys: ['account:{from}', 'account:{to}'], waitMs: 30_000 })
  async transfer(from: string, to: string, amount: number): Promise<{ keys?: readonly string[]; fencingTokens?: ReadonlyMap<string, number> }> {
    const balance = async (id: string): Promise<number> => Number((await this.redis.get(`${PREFIX}balance:${id}`)) ?? 0);
    const [a, b] = [await balance(from), await balance(to)];
    await this.hook?.();
    await new Promise((resolve) => setImmediate(resolve));
    await this.redis.set(`${PREFIX}balance:${from}`, a - amount);
    await this.redis.set(`${PREFIX}balance:${to}`, b + amount);
    const set = this.locks.currentLeaseSet();
    return { keys: set?.keys, fencingTokens: set?.fencingTokens };
  }

  @DistributedLock({ keys: (from: string, to: string) => [`account:${from}`, `account:${to}`], waitMs: 0, onLocked: 'skip' })
  async transferOnce(from: string, to: string): Promise<string> {
    this.runs++;
    return 'moved';
  }
}

@Injectable()
class UnknownPlaceholderInKeys {
  @DistributedLock({ keys: ['account:{from}', 'account:{too}'] })
  async move(from: string, to: string): Promise<void> {}
}

@Injectable()
class KeyAndKeys {
  @DistributedLock({ key: 'account:{from}', keys: ['account:{to}'] } as never)
  async move(from: string, to: string): Promise<void> {}
}

@Injectable()
class EmptyKeys {
  @DistributedLock({ keys: [] })
  async move(): Promise<void> {}
}

async function startupError(provider: Type<unknown>): Promise<LockConfigError> {
  const error = await startLockedApp({ lock: redisLock(PREFIX), providers: [provider] }).then(
    async (app) => {
      await app.close();
      throw new Error(`${provider.name} started`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LockConfigError);
  return error as LockConfigError;
}

describe('@DistributedLock with several keys', () => {
  let app: LockedApp;
  let data: Redis;
  beforeAll(async () => {
    data = inspectionClient();
    app = await startLockedApp({ lock: redisLock(PREFIX), providers: [AccountService, { provide: DATA, useValue: data }] });
  });
  afterAll(async () => {
    await app.close();
    data.disconnect();
  });

  it('holds every key rendered from the arguments, in the global order whatever order the arguments name them', async () => {
    const service = app.get(AccountService);
    const store = app.get<LockStore>(LockStore);
    const held: Array<number | undefined> = [];
    service.hook = async () => {
      held.push((await store.inspect('account:b'))?.fencingToken, (await store.inspect('account:a'))?.fencingToken);
    };
    try {
      const result = await service.transfer('b', 'a', 5);
      expect(result.keys).toEqual(['account:a', 'account:b']);
      expect(held).toEqual([result.fencingTokens!.get('account:b'), result.fencingTokens!.get('account:a')]);
      expect(held.every((token) => typeof token === 'number')).toBe(true);
    } finally {
      service.hook = undefined;
    }
    expect(await store.inspect('account:a')).toBeNull();
    expect(await store.inspect('account:b')).toBeNull();
  });

  it('serialises transfers over the same two accounts named in opposite orders: no update lost', async () => {
    const service = app.get(AccountService);
    const calls = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? service.transfer('p', 'q', 1) : service.transfer('q', 'p', 2)));
    await Promise.all(calls);
    // 10 transfers of 1 from p to q and 10 of 2 from q to p.
    expect(Number(await data.get(`${PREFIX}balance:p`))).toBe(10);
    expect(Number(await data.get(`${PREFIX}balance:q`))).toBe(-10);
  });

  it('applies onLocked when one key stays taken, without running the method and leaving the other key free', async () => {
    const service = app.get(AccountService);
    const store = app.get<LockStore>(LockStore);
    const blocker = await app.get(LockService).acquire('account:y');
    try {
      expect(await service.transferOnce('x', 'y')).toBeUndefined();
      expect(service.runs).toBe(0);
      expect(await store.inspect('account:x')).toBeNull();
    } finally {
      await blocker.release();
    }
    expect(await service.transferOnce('x', 'y')).toBe('moved');
  });

  it('refuses at startup a template of `keys` whose placeholder names no parameter, naming the template', async () => {
    expect((await startupError(UnknownPlaceholderInKeys)).message).toMatch(/UnknownPlaceholderInKeys\.move.*keys\[1\].*too/);
  });

  it('refuses at startup `key` together with `keys`, and an empty `keys`', async () => {
    expect((await startupError(KeyAndKeys)).message).toMatch(/keys of @DistributedLock on KeyAndKeys\.move.*not both/);
    expect((await startupError(EmptyKeys)).message).toMatch(/keys of @DistributedLock on EmptyKeys\.move.*non-empty array/);
  });
});
