import { Controller, Get, Inject, Injectable, Param, Scope } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLock, DistributedLockModule, LockConfigError, LockNotAcquiredError, LockNotBoundError, LockService, LockStore } from '../../lib/index';
import { inspectionClient, keysUnder, redisLock, startLockedApp, type LockedApp } from '../decorator/locked-app';
import { moduleStartError } from '../support/module-start';
import { testPrefix } from '../support/test-prefix';

const PREFIX = testPrefix(__filename);

@Injectable()
class InventoryService {
  readonly ran: string[] = [];
  observed?: () => Promise<unknown>;

  constructor(readonly locks: LockService) {}

  @DistributedLock('sku:{sku}', { waitMs: 0 })
  async reserve(sku: string): Promise<unknown> {
    this.ran.push(sku);
    return this.observed?.();
  }
}

@Injectable({ scope: Scope.REQUEST })
class RequestScopedStock {
  constructor(@Inject(REQUEST) private readonly req: { headers: Record<string, string> }) {}

  @DistributedLock('stock:{sku}', { waitMs: 0 })
  async count(sku: string, locks: LockService): Promise<object> {
    return { sku, key: locks.current()?.key, user: this.req.headers['x-user'] };
  }
}

@Controller('stock')
class StockController {
  constructor(
    private readonly stock: RequestScopedStock,
    private readonly locks: LockService,
  ) {}

  @Get(':sku')
  async get(@Param('sku') sku: string): Promise<object> {
    return this.stock.count(sku, this.locks);
  }
}

@Injectable({ scope: Scope.TRANSIENT })
class TransientWorker {
  @DistributedLock('worker:{id}', { waitMs: 0 })
  async work(id: string, locks: LockService): Promise<string | undefined> {
    return locks.current()?.key;
  }
}

@Injectable()
class WorkerHost {
  constructor(
    readonly worker: TransientWorker,
    readonly locks: LockService,
  ) {}
}

describe('binding a locked call to its own application', () => {
  const redis = inspectionClient();
  afterAll(() => redis.disconnect());

  describe('two applications in one process with different configurations', () => {
    let onRedis: LockedApp;
    let inMemory: LockedApp;

    beforeAll(async () => {
      onRedis = await startLockedApp({ lock: redisLock(`${PREFIX}a:`), providers: [InventoryService] });
      inMemory = await startLockedApp({ lock: { store: 'memory' }, providers: [InventoryService] });
    });

    afterAll(async () => {
      await Promise.all([onRedis?.close(), inMemory?.close()]);
    });

    it('locks each instance through its own application store', async () => {
      const redisInventory = onRedis.get(InventoryService);
      const memoryInventory = inMemory.get(InventoryService);
      redisInventory.observed = async () => ({
        redisKeys: await keysUnder(redis, `${PREFIX}a:`),
        own: await onRedis.get<LockStore>(LockStore).inspect('sku:1'),
        other: await inMemory.get<LockStore>(LockStore).inspect('sku:1'),
      });
      memoryInventory.observed = async () => ({
        redisKeys: await keysUnder(redis, `${PREFIX}a:`),
        own: await inMemory.get<LockStore>(LockStore).inspect('sku:1'),
        other: await onRedis.get<LockStore>(LockStore).inspect('sku:1'),
      });
      await expect(redisInventory.reserve('1')).resolves.toEqual({
        redisKeys: [`${PREFIX}a:sku:1`],
        own: expect.objectContaining({ key: 'sku:1' }),
        other: null,
      });
      await expect(memoryInventory.reserve('1')).resolves.toEqual({
        redisKeys: [],
        own: expect.objectContaining({ key: 'sku:1' }),
        other: null,
      });
    });

    it("does not see the other application's locks, but does see its own", async () => {
      onRedis.get(InventoryService).observed = undefined;
      inMemory.get(InventoryService).observed = undefined;
      const held = await onRedis.get(LockService).acquire('sku:2');
      try {
        await expect(inMemory.get(InventoryService).reserve('2')).resolves.toBeUndefined();
        await expect(onRedis.get(InventoryService).reserve('2')).rejects.toBeInstanceOf(LockNotAcquiredError);
      } finally {
        await held.release();
      }
    });
  });

  it('fails clearly, without running the method, before init, after close, and on instances Nest did not create', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot(redisLock(PREFIX))],
      providers: [InventoryService],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    const inventory = app.get(InventoryService);

    await expect(inventory.reserve('early')).rejects.toThrow(LockNotBoundError);
    await expect(inventory.reserve('early')).rejects.toThrow(/InventoryService\.reserve .*did not run.*app\.init\(\)/);

    await app.init();
    await expect(inventory.reserve('running')).resolves.toBeUndefined();
    await expect(new InventoryService(app.get(LockService)).reserve('manual')).rejects.toThrow(LockNotBoundError);
    const detached = inventory.reserve;
    await expect(detached('detached')).rejects.toThrow(/without an instance/);

    await app.close();
    await expect(inventory.reserve('late')).rejects.toThrow(LockNotBoundError);
    expect(inventory.ran).toEqual(['running']);
  });

  it('rejects at startup an instance shared by two applications', async () => {
    const first = await startLockedApp({ lock: redisLock(PREFIX), providers: [InventoryService] });
    try {
      const shared = first.get(InventoryService);
      const error = await moduleStartError(redisLock(PREFIX), { providers: [{ provide: InventoryService, useValue: shared }] });
      expect(error).toBeInstanceOf(LockConfigError);
      expect((error as Error).message).toMatch(/InventoryService.*one DistributedLockModule per application/);
      // The instance still locks through the application that bound it first.
      await expect(shared.reserve('shared')).resolves.toBeUndefined();
    } finally {
      await first.close();
    }
  });

  it('locks methods of request-scoped providers, created after startup', async () => {
    const app = await startLockedApp({ lock: redisLock(PREFIX), controllers: [StockController], providers: [RequestScopedStock] });
    try {
      const response = await request(app.app.getHttpServer()).get('/stock/9').set('x-user', 'ann').expect(200);
      expect(response.body).toEqual({ sku: '9', key: 'stock:9', user: 'ann' });
    } finally {
      await app.close();
    }
  });

  it('locks methods of transient providers', async () => {
    const app = await startLockedApp({ lock: redisLock(PREFIX), providers: [TransientWorker, WorkerHost] });
    try {
      const host = app.get(WorkerHost);
      await expect(host.worker.work('w1', host.locks)).resolves.toBe('worker:w1');
    } finally {
      await app.close();
    }
  });
});
