import 'reflect-metadata';
import assert from 'node:assert/strict';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { DistributedLockModule, LockModule, type Lease } from 'nestjs-distributed-lock';
import { AppModule } from './app.module.js';
import { checkEntryPoints } from './entry-points.js';
import { ReportJob } from './report.job.js';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const entry = import.meta.resolve('nestjs-distributed-lock');
assert.match(entry, /\/dist\/esm\/index\.js$/, `resolved to ${entry}, not the ES module build`);
assert.equal(LockModule, DistributedLockModule);

const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
// A client of our own, to see the lock where other instances would: in Redis, under our prefix.
const redis = new Redis(process.env.REDIS_URL!);
try {
  const job = app.get(ReportJob);
  const entered = deferred<Lease>();
  const finish = deferred<void>();
  const done = job.run(async (lease) => {
    entered.resolve(lease);
    await finish.promise;
    return lease.fencingToken;
  });

  // Probing from here, not from inside `work`: inside, the same call chain would be a re-entry, not a rival.
  const lease = await entered.promise;
  try {
    assert.ok(Number.isSafeInteger(lease.fencingToken) && lease.fencingToken > 0, `fencingToken ${lease.fencingToken}, testing and health entry points`);
    assert.equal(await redis.exists('consumer12:k'), 1, 'no consumer12:k key in Redis while held');
    assert.equal(await job.tryStart(), null, 'a concurrent tryAcquire got the held key');
  } finally {
    finish.resolve();
  }

  assert.equal(await done, lease.fencingToken);
  assert.equal(lease.held, false);
  const next = await job.tryStart();
  assert.ok(next, 'the key stayed taken after withLock returned');
  assert.ok(next.fencingToken > lease.fencingToken, 'fencing token did not increase');
  await next.release();
  await checkEntryPoints();
  console.log(`OK nest12-esm: ${entry.slice(entry.indexOf('nestjs-distributed-lock'))}, fencingToken ${lease.fencingToken}, testing and health entry points, openTelemetry`);
} finally {
  redis.disconnect();
  // No process.exit(): if the library leaves sockets or timers open after close, the process hangs and the
  // runner's timeout reports it.
  await app.close();
}
