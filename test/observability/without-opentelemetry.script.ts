/**
 * Child process of opentelemetry-option.spec.ts: an application where `@opentelemetry/api` cannot be
 * resolved, as for users who never installed it. The library loads and locks (events, diagnostics channels
 * and all); only the `openTelemetry` option needs the package, and startup says so. Prints one JSON line.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const NodeModule = require('node:module') as { _resolveFilename: (request: string, ...rest: unknown[]) => string };

let apiLoaded = false;
const resolve = NodeModule._resolveFilename;
NodeModule._resolveFilename = function (request: string, ...rest: unknown[]): string {
  if (request.startsWith('@opentelemetry/')) {
    apiLoaded = true;
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
  class PlainModule {}
  const app = await NestFactory.createApplicationContext(PlainModule, { logger: false });
  const locked = await app.get(lib.LockService).withLock('k', async () => 'locked');
  await app.close();
  const loadedBefore = apiLoaded;

  @Module({ imports: [lib.DistributedLockModule.forRoot({ store: 'memory', openTelemetry: true })] })
  class TelemetryModule {}
  const startup = await NestFactory.createApplicationContext(TelemetryModule, { logger: false, abortOnError: false }).then(
    async (started) => {
      await started.close();
      return 'started';
    },
    (error: Error) => `${error.name}: ${error.message}`,
  );
  process.stdout.write(`${JSON.stringify({ locked, apiLoaded: loadedBefore, startup })}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
