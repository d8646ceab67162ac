import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import { DistributedLockModule, LockService, type AcquireOptions } from '../../../lib/index';
import { workerLockOptions } from './worker-store';

/**
 * Child process of the shaped exclusion tests: several loops, each holding one key again and again as a
 * reader or a writer (`rw`: one call in three writes) or as a permit holder (`permits:<n>`). Each hold is
 * recorded on the run's Redis as `enter|<mode>|<fencing token>` right after its grant and
 * `exit|<mode>|<fencing token>` right before its release, with an await in between, so the history (one
 * list, in Redis' order) shows every overlap. Writers also do a read-modify-write of a counter, which
 * two overlapping writers would lose an increment of.
 */
async function main(): Promise<void> {
  const [prefix, historyKey, shape, loops, iterations] = process.argv.slice(2) as [string, string, string, string, string];
  const permits = shape.startsWith('permits:') ? Number(shape.slice('permits:'.length)) : undefined;

  @Module({ imports: [DistributedLockModule.forRoot(workerLockOptions(prefix, { waitMs: 60_000 }))] })
  class WorkerModule {}

  const app = await NestFactory.createApplicationContext(WorkerModule, { logger: false });
  const locks = app.get(LockService);
  const redis = new Redis(process.env.REDIS_URL!);
  const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
  const loop = async (): Promise<void> => {
    for (let i = 0; i < Number(iterations); i++) {
      const mode = permits !== undefined ? 'permit' : Math.random() < 1 / 3 ? 'write' : 'read';
      const options: AcquireOptions = permits !== undefined ? { permits } : { mode: mode as 'read' | 'write' };
      await locks.withLock('shaped', options, async (lease) => {
        await redis.rpush(historyKey, `enter|${mode}|${lease.fencingToken}`);
        if (mode === 'write') {
          const value = Number((await redis.get(`${historyKey}:counter`)) ?? 0);
          await pause();
          await redis.set(`${historyKey}:counter`, String(value + 1));
          await redis.incr(`${historyKey}:writes`);
        } else {
          await pause();
        }
        await redis.rpush(historyKey, `exit|${mode}|${lease.fencingToken}`);
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: Number(loops) }, loop));
  } finally {
    await app.close();
    redis.disconnect();
  }
}

// Exit codes are what the spec reads: 0 every hold done, 1 anything else (printed).
main()
  .then(() => 0)
  .catch((error: unknown) => (console.error(error), 1))
  .then((code) => process.exit(code));
