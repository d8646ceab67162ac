import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { DistributedLockModule, LeaseLostError, LockService } from '../../../lib/index';
import { RedisFencedResource } from '../../support/redis-fenced-resource';
import { workerLockOptions } from './worker-store';

/**
 * Child process of the "holder paused past its lease" drills: takes a lease and reports it, then waits
 * for its lease signal (the parent SIGSTOPs it meanwhile). When the lease is declared lost, it still makes
 * the write it was about to make, under its old fencing token, as a holder that did not check would, and
 * reports why the lease was lost, whether the fenced resource took the late write, and whether the store
 * had already been told by the server (it should not have been: the loss comes from the local deadline).
 */
async function main(): Promise<void> {
  const [prefix, key, leaseMs, resourceKey] = process.argv.slice(2) as [string, string, string, string];

  @Module({ imports: [DistributedLockModule.forRoot(workerLockOptions(prefix, { leaseMs: Number(leaseMs) }))] })
  class HolderModule {}

  const app = await NestFactory.createApplicationContext(HolderModule, { logger: false });
  const resource = new RedisFencedResource(process.env.REDIS_URL!, resourceKey);
  const lease = await app.get(LockService).acquire(key, { waitMs: 0 });
  const lost = new Promise<unknown>((resolve) => lease.signal.addEventListener('abort', () => resolve(lease.signal.reason), { once: true }));
  process.send!({ held: true, fencingToken: lease.fencingToken });
  const reason = await lost;
  const writeAccepted = await resource.write('late write of the paused holder', lease.fencingToken);
  process.send!({ lost: reason instanceof LeaseLostError ? reason.reason : String(reason), writeAccepted });
  resource.close();
  await app.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
