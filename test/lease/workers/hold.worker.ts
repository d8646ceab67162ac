import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { DistributedLockModule, LockService } from '../../../lib/index';
import { workerLockOptions } from './worker-store';

/**
 * Child process of the liveness drills: takes a lease (waiting up to `waitMs`, default one attempt),
 * reports it, then hangs until it is killed. Killed while still waiting, it is a crashed waiter. The store
 * (Redis by default) comes from the environment, see worker-store.ts.
 */
async function main(): Promise<void> {
  // `shape`: JSON acquire options of a read/write lock or a semaphore (`{"mode":"read"}`, `{"permits":2}`).
  const [prefix, key, leaseMs, waitMs = '0', shape = '{}'] = process.argv.slice(2) as [string, string, string, string?, string?];

  @Module({ imports: [DistributedLockModule.forRoot(workerLockOptions(prefix))] })
  class HolderModule {}

  const app = await NestFactory.createApplicationContext(HolderModule, { logger: false });
  const lease = await app.get(LockService).acquire(key, { ...JSON.parse(shape), leaseMs: Number(leaseMs), waitMs: Number(waitMs) });
  process.send!({ held: true, fencingToken: lease.fencingToken });
  setInterval(() => undefined, 1_000);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
