import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLockModule, LockService } from '../../../lib/index';

/**
 * Child process of redis-close-unreachable.spec.ts: an application whose Redis does not answer takes a
 * lock (which fails), closes, and reports what still keeps the process alive.
 */
async function main(): Promise<void> {
  const [url] = process.argv.slice(2) as [string];
  @Module({ imports: [DistributedLockModule.forRoot({ redis: url, commandTimeoutMs: 300 })] })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  await app.get(LockService).acquire('k', { waitMs: 0 }).catch(() => undefined);
  await app.close();
  // What would keep the process alive now (ref'd timers and sockets): nothing of the library's may be among it.
  const handles = (process as unknown as { _getActiveHandles(): Array<{ constructor: { name: string }; hasRef?: () => boolean }> })._getActiveHandles();
  const own = new Set<unknown>([process.stdin, process.stdout, process.stderr]);
  const left = handles.filter((handle) => !own.has(handle) && handle.hasRef?.() !== false).map((handle) => handle.constructor.name);
  process.stdout.write(`${JSON.stringify({ left })}\n`);
}

void main();
