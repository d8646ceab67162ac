import { Injectable, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedLock, DistributedLockModule, LockKeyError, LockService, LockStoreUnavailableError } from '../../lib/index';
import { freePort } from '../../scripts/servers/redis-server';
import { redisUrl, testPrefix } from '../support/test-prefix';

/** Every line the application logged, by level. */
class RecordingLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: string }> = [];
  log = (message: unknown): void => void this.lines.push({ level: 'log', message: String(message) });
  warn = (message: unknown): void => void this.lines.push({ level: 'warn', message: String(message) });
  error = (message: unknown): void => void this.lines.push({ level: 'error', message: String(message) });
  debug = (message: unknown): void => void this.lines.push({ level: 'debug', message: String(message) });
  verbose = (message: unknown): void => void this.lines.push({ level: 'verbose', message: String(message) });
  at(level: string, pattern: RegExp): string[] {
    return this.lines.filter((line) => line.level === level && pattern.test(line.message)).map((line) => line.message);
  }
}

@Injectable()
class Orders {
  @DistributedLock({ key: 'order:{orderId}', waitMs: 0 })
  async pay(orderId: unknown): Promise<unknown> {
    return orderId;
  }
}

async function start(redis: string, logger: RecordingLogger) {
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedLockModule.forRoot({ redis, keyPrefix: testPrefix(__filename), commandTimeoutMs: 300 })],
    providers: [Orders],
  }).compile();
  const app = moduleRef.createNestApplication({ logger });
  await app.init();
  return app;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('store trouble in the application log', () => {
  it('says at startup that the store is unreachable, and warns once per outage, not once per request', async () => {
    const logger = new RecordingLogger();
    const port = await freePort();
    const app = await start(`redis://127.0.0.1:${port}`, logger);
    try {
      await until(() => logger.at('warn', /unreachable at startup/).length > 0);
      expect(logger.at('warn', /unreachable at startup/)[0]).toContain(`127.0.0.1:${port}`);
      const locks = app.get(LockService);
      for (let i = 0; i < 3; i++) await expect(locks.acquire(`k${i}`, { waitMs: 0 })).rejects.toBeInstanceOf(LockStoreUnavailableError);
      const outage = logger.at('warn', /Lock store unavailable/);
      expect(outage).toHaveLength(1);
      expect(outage[0]).toContain(`127.0.0.1:${port}`);
    } finally {
      await app.close();
    }
  });

  it('says when the store answers again after an outage', async () => {
    const logger = new RecordingLogger();
    const app = await start(redisUrl(), logger);
    try {
      const locks = app.get(LockService);
      // An outage as the events report it: the logger hears every failed acquisition through them.
      const store = (locks as unknown as { store: { acquire: (...args: unknown[]) => Promise<unknown> } }).store;
      const acquire = store.acquire.bind(store);
      store.acquire = () => Promise.reject(new LockStoreUnavailableError('acquire', 'x', { cause: new Error('injected') }));
      await expect(locks.acquire('a', { waitMs: 0 })).rejects.toBeInstanceOf(LockStoreUnavailableError);
      await expect(locks.acquire('b', { waitMs: 0 })).rejects.toBeInstanceOf(LockStoreUnavailableError);
      store.acquire = acquire;
      await (await locks.acquire('c', { waitMs: 0 })).release();
      expect(logger.at('warn', /Lock store unavailable/)).toHaveLength(1);
      expect(logger.at('log', /answers again \(2 acquisition\(s\) failed/)).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('names the placeholder and the method of a refused key, once per method', async () => {
    const logger = new RecordingLogger();
    const app = await start(redisUrl(), logger);
    try {
      const orders = app.get(Orders);
      await expect(orders.pay(undefined)).rejects.toBeInstanceOf(LockKeyError);
      await expect(orders.pay('')).rejects.toBeInstanceOf(LockKeyError);
      const warned = logger.at('warn', /Lock key/);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toContain('Orders.pay');
      expect(warned[0]).toContain('{orderId}');
    } finally {
      await app.close();
    }
  });
});
