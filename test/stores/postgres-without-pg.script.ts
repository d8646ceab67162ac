/**
 * Child process of postgres-module-options.spec.ts: an application where `pg` cannot be resolved, as for
 * users who never installed it. The library loads and locks on another store; only creating the
 * PostgreSQL store needs pg, and it says so. Prints one JSON line.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const NodeModule = require('node:module') as { _resolveFilename: (request: string, ...rest: unknown[]) => string };

let pgLoaded = false;
const resolve = NodeModule._resolveFilename;
NodeModule._resolveFilename = function (request: string, ...rest: unknown[]): string {
  if (request === 'pg' || request.startsWith('pg/')) {
    pgLoaded = true;
    throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' });
  }
  return resolve.call(this, request, ...rest);
};

async function main(): Promise<void> {
  require('reflect-metadata');
  const { Module } = require('@nestjs/common') as typeof import('@nestjs/common');
  const { NestFactory } = require('@nestjs/core') as typeof import('@nestjs/core');
  const lib = require('../../lib/index') as typeof import('../../lib/index');

  @Module({ imports: [lib.DistributedLockModule.forRoot({ store: 'memory' })] })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const memoryStore = await app.get(lib.LockService).withLock('k', async () => 'locked');
  await app.close();
  const loadedBefore = pgLoaded;

  const postgresStore = await lib.PostgresLockStore.create({ connection: 'postgres://app@127.0.0.1:1/app' }).then(
    () => 'created',
    (error: Error) => error.message,
  );
  process.stdout.write(`${JSON.stringify({ memoryStore, pgLoaded: loadedBefore, postgresStore })}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
