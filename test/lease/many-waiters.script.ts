/**
 * Child process of waiting.spec.ts: 24 callers of one application wait for one key at once (every wait
 * listens to the application's shutdown signal) and the process's warnings are collected. Prints one JSON line.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
async function main(): Promise<void> {
  const warnings: string[] = [];
  process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));
  require('reflect-metadata');
  const { Module } = require('@nestjs/common') as typeof import('@nestjs/common');
  const { NestFactory } = require('@nestjs/core') as typeof import('@nestjs/core');
  const lib = require('../../lib/index') as typeof import('../../lib/index');

  @Module({ imports: [lib.DistributedLockModule.forRoot({ store: 'memory', keyPrefix: 'many-waiters:' })] })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const locks = app.get(lib.LockService);
  const events = app.get(lib.LockEvents);
  const lease = await locks.acquire('crowd');
  let entered = 0;
  let waiting = 0;
  const allWaiting = new Promise<void>((resolve) =>
    events.on('contention', () => {
      if (++waiting === 1) resolve();
    }),
  );
  const waits = Array.from({ length: 24 }, () => locks.withLock('crowd', { waitMs: 50_000 }, async () => void entered++));
  await allWaiting;
  // Every caller has queued by now (they were all started before the first denial came back).
  await lease.release();
  await Promise.all(waits);
  await app.close();
  // Warnings are emitted on a later tick.
  await new Promise((resolve) => setImmediate(resolve));
  process.stdout.write(`${JSON.stringify({ entered, warnings })}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
