import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { DistributedLockModule, LockService } from '../../../lib/index';

/** Child process of the liveness drill: takes a lease, reports it, then hangs until it is killed. */
async function main(): Promise<void> {
  const [prefix, key, leaseMs] = process.argv.slice(2) as [string, string, string];

  @Module({ imports: [DistributedLockModule.forRoot({ redis: process.env.REDIS_URL!, keyPrefix: prefix })] })
  class HolderModule {}

  const app = await NestFactory.createApplicationContext(HolderModule, { logger: false });
  const lease = await app.get(LockService).acquire(key, { leaseMs: Number(leaseMs), waitMs: 0 });
  process.send!({ held: true, fencingToken: lease.fencingToken });
  setInterval(() => undefined, 1_000);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
