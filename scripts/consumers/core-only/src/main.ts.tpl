import 'reflect-metadata';
import assert from 'node:assert/strict';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLock, DistributedLockModule, LockConfigError, LockService } from 'nestjs-distributed-lock';
import { LockTestingModule } from 'nestjs-distributed-lock/testing';

@Injectable()
class Jobs {
  @DistributedLock('job:{name}', { waitMs: 0 })
  async run(name: string): Promise<string> {
    return name;
  }
}

async function main(): Promise<void> {
  // The testing entry needs none of the optional peers (the others are for users of their peer).
  assert.equal(typeof LockTestingModule.forRoot, 'function');

  @Module({ imports: [DistributedLockModule.forRoot({ redis: process.env.REDIS_URL!, keyPrefix: 'core-only:', isGlobal: true })], providers: [Jobs] })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
  try {
    assert.equal(await app.get(Jobs).run('nightly'), 'nightly');
    const lease = await app.get(LockService).acquire('manual', { waitMs: 0 });
    assert.ok(lease.fencingToken > 0);
    await lease.release();
  } finally {
    await app.close();
  }

  // A store or an option whose optional peer is missing fails the start, saying what to install.
  for (const [options, peer] of [
    [{ store: 'postgres', postgres: 'postgres://127.0.0.1:1/x' }, 'pg'],
    [{ store: 'etcd', etcd: 'http://127.0.0.1:1' }, 'etcd3'],
    [{ redis: process.env.REDIS_URL!, openTelemetry: true }, '@opentelemetry/api'],
  ] as const) {
    @Module({ imports: [DistributedLockModule.forRoot(options)] })
    class MissingPeerModule {}
    const error = await NestFactory.createApplicationContext(MissingPeerModule, { logger: false, abortOnError: false }).then(
      async (started) => {
        await started.close();
        return undefined;
      },
      (failure: unknown) => failure,
    );
    assert.ok(error instanceof LockConfigError, `${peer}: expected LockConfigError, got ${String(error)}`);
    assert.match(error.message, new RegExp(`npm install ${peer.replace('/', '\\/')}`));
  }
  console.log('OK core-only: main and testing entries without optional peers; a missing peer is named at startup');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
