import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import { DistributedLockModule, LockService } from '../../../lib/index';
import { workerLockOptions } from './worker-store';

/**
 * Child process of the multi-key tests: loops that each lock the same two accounts, naming them in opposite
 * orders (`order` is 'forward' or 'backward' for the first loop, the other loops alternate), then move one
 * unit from one account's counter to a total kept under both keys with a read-modify-write of both and an
 * await in between. A call that took the keys in the order it names them would deadlock against a loop that
 * names them the other way round (waitMs is far longer than the test), and any overlap would lose an update.
 * The two lock keys may be given after the iterations (a Cluster spec picks keys on different masters).
 */
async function main(): Promise<void> {
  const [prefix, counterKey, order, loops, iterations, keyX = 'account:x', keyY = 'account:y'] = process.argv.slice(2) as string[] as [
    string,
    string,
    string,
    string,
    string,
    string?,
    string?,
  ];

  @Module({ imports: [DistributedLockModule.forRoot(workerLockOptions(prefix, { waitMs: 600_000 }))] })
  class WorkerModule {}

  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: false });
  const locks = app.get(LockService);
  const redis = new Redis(process.env.REDIS_URL!);
  const read = async (key: string): Promise<number> => Number((await redis.get(key)) ?? 0);
  const loop = async (index: number): Promise<void> => {
    const forward = (order === 'forward') === (index % 2 === 0);
    const keys = forward ? [keyX, keyY] : [keyY, keyX];
    for (let i = 0; i < Number(iterations); i++) {
      await locks.withLocks(keys, async () => {
        const x = await read(`${counterKey}:x`);
        const y = await read(`${counterKey}:y`);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
        await redis.set(`${counterKey}:x`, String(x + 1));
        await redis.set(`${counterKey}:y`, String(y + 1));
      });
    }
  };
  await Promise.all(Array.from({ length: Number(loops) }, (_, index) => loop(index)));
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
