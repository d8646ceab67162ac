import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  DistributedLockModule,
  LockConfigError,
  LockModule,
  LockService,
  MemoryLockStore,
  type LockModuleOptions,
} from '../../lib/index';
import { appStartError, moduleStartError } from '../support/module-start';
import { redisUrl, testPrefix } from '../support/test-prefix';

async function start(imports: unknown[]): Promise<{ get: <T>(type: new (...args: never[]) => T) => T; close: () => Promise<void> }> {
  const moduleRef = await Test.createTestingModule({ imports: imports as never[] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { get: (type) => app.get(type), close: () => app.close() };
}


describe('module configuration', () => {
  const prefix = testPrefix(__filename);

  it.each([
    ['leaseMs', { leaseMs: -1 }],
    ['leaseMs', { leaseMs: '30s' }],
    ['waitMs', { waitMs: 1.5 }],
    ['store', { store: 'mongo' }],
    ['keyPrefix', { keyPrefix: 'app{1}:' }],
    ['renewIntervalMs', { leaseMs: 1_000, renewIntervalMs: 1_000 }],
    ['commandTimeoutMs', { commandTimeoutMs: 0 }],
    ['retryMaxDelayMs', { retryMinDelayMs: 100, retryMaxDelayMs: 10 }],
    ['redis', { redis: undefined }],
    ['redis', { redis: 42 }],
    ['redis', { redis: 'localhost:6379' }],
    ['leaseMS', { leaseMS: 10_000 }],
    ['postgres', { postgres: 'postgres://app:secret@db/app' }],
    ['etcd', { etcd: 'http://etcd:2379' }],
    ['zookeeper', { zookeeper: 'zk-0:2181' }],
    ['redlock', { redlock: { masters: ['redis://a:6379', 'redis://b:6379', 'redis://c:6379'] } }],
  ])('rejects a bad %s at startup with LockConfigError naming it', async (option, bad) => {
    const error = await moduleStartError({ redis: redisUrl(), ...bad } as LockModuleOptions);
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as LockConfigError).option).toBe(option);
    expect((error as LockConfigError).code).toBe('LOCK_CONFIG_INVALID');
    expect((error as Error).message).toContain(`"${option}"`);
  });

  it('refuses a connection option for another store than the chosen one, without printing it', async () => {
    const error = await moduleStartError({ redis: redisUrl(), postgres: 'postgres://app:secret@db/app' } as LockModuleOptions);
    expect(error).toMatchObject({ option: 'postgres' });
    expect((error as Error).message).toContain("only with store: 'postgres'");
    expect((error as Error).message).not.toContain('secret');
  });

  it('rejects bad per-call options before touching the store', async () => {
    const app = await start([DistributedLockModule.forRoot({ store: 'memory' })]);
    const locks = app.get(LockService);
    await expect(locks.acquire('k', { leaseMs: 0 })).rejects.toMatchObject({ option: 'leaseMs' });
    await expect(locks.acquire('k', { waitMs: -5 })).rejects.toMatchObject({ option: 'waitMs' });
    await expect(locks.acquire('k', { minHoldMs: Number.NaN })).rejects.toBeInstanceOf(LockConfigError);
    await app.close();
  });

  it('exports the same class as DistributedLockModule and LockModule', () => {
    expect(LockModule).toBe(DistributedLockModule);
  });

  it('configures through forRootAsync with useFactory and inject', async () => {
    @Injectable()
    class AppConfig {
      readonly redisUrl = redisUrl();
    }
    @Module({ providers: [AppConfig], exports: [AppConfig] })
    class ConfigModule {}

    const app = await start([
      LockModule.forRootAsync({
        imports: [ConfigModule],
        inject: [AppConfig],
        useFactory: (config: AppConfig) => ({ redis: config.redisUrl, keyPrefix: prefix }),
      }),
    ]);
    const lease = await app.get(LockService).acquire('async-factory');
    expect(lease.fencingToken).toBeGreaterThan(0);
    await lease.release();
    await app.close();
  });

  it('configures through forRootAsync with useClass', async () => {
    @Injectable()
    class LockOptionsFactory {
      createLockOptions(): LockModuleOptions {
        return { store: 'memory', leaseMs: 1_234 };
      }
    }
    const app = await start([DistributedLockModule.forRootAsync({ useClass: LockOptionsFactory })]);
    const lease = await app.get(LockService).acquire('use-class');
    expect(lease.expiresAt - Date.now()).toBeLessThanOrEqual(1_234);
    await lease.release();
    await app.close();
  });

  it('refuses a useClass or useExisting provider without createLockOptions with LockConfigError naming the class', async () => {
    @Injectable()
    class MisnamedFactory {
      // A plain JavaScript user's typo: the module wants createLockOptions.
      createOptions(): LockModuleOptions {
        return { store: 'memory' };
      }
    }
    @Module({ providers: [MisnamedFactory], exports: [MisnamedFactory] })
    class ConfigHome {}
    for (const async of [{ useClass: MisnamedFactory }, { imports: [ConfigHome], useExisting: MisnamedFactory }] as never[]) {
      const error = await appStartError({ imports: [DistributedLockModule.forRootAsync(async)] });
      expect(error).toBeInstanceOf(LockConfigError);
      expect((error as Error).message).toMatch(/forRootAsync\(\{ use(Class|Existing) \}\)" = "MisnamedFactory".*createLockOptions/);
    }
  });

  it('makes LockService injectable everywhere with isGlobal', async () => {
    @Injectable()
    class Payments {
      constructor(@Inject(LockService) readonly locks: LockService) {}
    }
    @Module({ providers: [Payments], exports: [Payments] })
    class PaymentsModule {}

    const app = await start([DistributedLockModule.forRoot({ store: 'memory', isGlobal: true }), PaymentsModule]);
    expect(app.get(Payments).locks).toBeInstanceOf(LockService);
    await app.close();
  });

  it('reuses a client it is given and leaves it open; closes the ones it opened', async () => {
    const client = new Redis(redisUrl());
    const app = await start([DistributedLockModule.forRoot({ redis: client, keyPrefix: prefix })]);
    await app.get(LockService).withLock('reused', async () => undefined);
    await app.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
  });

  it('lets two applications in one process lock through their own stores', async () => {
    const memory = await start([DistributedLockModule.forRoot({ store: 'memory' })]);
    const redis = await start([DistributedLockModule.forRoot({ redis: redisUrl(), keyPrefix: prefix })]);
    const inMemory = await memory.get(LockService).acquire('same-key');
    const inRedis = await redis.get(LockService).acquire('same-key', { waitMs: 0 });
    expect(inRedis.fencingToken).toBeGreaterThan(0);
    await inMemory.release();
    await inRedis.release();
    await memory.close();
    await redis.close();
  });

  it('locks through a LockStore instance handed in as `store`, and closes it at shutdown', async () => {
    const store = new MemoryLockStore({ keyPrefix: prefix });
    let closed = 0;
    const close = store.close.bind(store);
    store.close = async () => {
      closed++;
      await close();
    };
    const app = await start([DistributedLockModule.forRoot({ store })]);
    const lease = await app.get(LockService).acquire('instance-key');
    expect(await store.inspect('instance-key')).toMatchObject({ fencingToken: lease.fencingToken });
    await lease.release();
    await app.close();
    expect(closed).toBe(1);
  });
});
