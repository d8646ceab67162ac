import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { ensureLocalServers } from './infra/local-servers.js';
import { welcome } from './infra/welcome.js';

async function bootstrap(): Promise<void> {
  const stopLocalServers = await ensureLocalServers();
  const app = await NestFactory.create(AppModule, { logger: ['log', 'warn', 'error'] });
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, '127.0.0.1');
  // The demo starts instances with an IPC channel and waits for this before sending traffic; it seeds its
  // own data. Started by hand, the app seeds a little and says how to try it.
  if (process.send) process.send({ type: 'ready', port, pid: process.pid });
  else await welcome(app, port);
  const shutdown = async (): Promise<void> => {
    await app.close();
    await stopLocalServers();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  process.once('disconnect', () => void shutdown());
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
