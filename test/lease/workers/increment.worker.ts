import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { DistributedLockModule, LockService } from '../../../lib/index';
import { openSharedCounter, workerLockOptions } from './worker-store';

/**
 * Child process of the mutual-exclusion tests: several loops, each a read-modify-write of one shared value
 * under the lock with an await between the read and the write, so any overlap would lose an increment.
 * Every write is recorded with the fencing token it was made under. The store (Redis by default) comes
 * from the environment, see worker-store.ts.
 */
async function main(): Promise<void> {
  const [prefix, counterKey, loops, iterations] = process.argv.slice(2) as [string, string, string, string];

  @Module({ imports: [DistributedLockModule.forRoot(workerLockOptions(prefix, { waitMs: 60_000 }))] })
  class WorkerModule {}

  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: false });
  const locks = app.get(LockService);
  const counter = await openSharedCounter(counterKey);
  const loop = async (): Promise<void> => {
    for (let i = 0; i < Number(iterations); i++) {
      await locks.withLock('counter', async (lease) => {
        const value = await counter.read();
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
        await counter.write(value + 1);
        await counter.record(value + 1, lease.fencingToken);
      });
    }
  };
  await Promise.all(Array.from({ length: Number(loops) }, loop));
  await app.close();
  await counter.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
