import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import { DistributedLockModule, LockService } from '../../../lib/index';

/**
 * Child process of the mutual-exclusion test: several loops, each a read-modify-write of one Redis value
 * under the lock with an await between the read and the write, so any overlap would lose an increment.
 */
async function main(): Promise<void> {
  const [prefix, counterKey, loops, iterations] = process.argv.slice(2) as [string, string, string, string];

  // The lock may live elsewhere than the counter (a Cluster, a Sentinel group: test/topology); the counter
  // always sits on the run's single Redis.
  const lockRedis = process.env.LOCK_TEST_REDIS_OPTION ? JSON.parse(process.env.LOCK_TEST_REDIS_OPTION) : process.env.REDIS_URL!;
  @Module({ imports: [DistributedLockModule.forRoot({ redis: lockRedis, keyPrefix: prefix, waitMs: 60_000 })] })
  class WorkerModule {}

  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: false });
  const locks = app.get(LockService);
  const redis = new Redis(process.env.REDIS_URL!);
  const loop = async (): Promise<void> => {
    for (let i = 0; i < Number(iterations); i++) {
      await locks.withLock('counter', async () => {
        const value = Number((await redis.get(counterKey)) ?? 0);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
        await redis.set(counterKey, String(value + 1));
      });
    }
  };
  await Promise.all(Array.from({ length: Number(loops) }, loop));
  await app.close();
  redis.disconnect();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
