import { loadOptionalPeer } from '../../support/optional-peer.js';
import { LockConfigError } from '../../errors/lock-config.error.js';
import { redactOptionValue } from '../../support/redact-option-value.js';
import { settlesWithin } from '../../support/settles-within.js';
import { destroySocket } from './postgres-shutdown.js';
import type {
  PostgresConnectionOption,
  PostgresListenClient,
  PostgresPool,
  PostgresPoolConfig,
} from './postgres-connection.interface.js';

/** What the store runs on: a pool for statements, a factory for its one LISTEN connection. */
export interface PostgresConnection {
  readonly pool: PostgresPool;
  /** False when the user handed the pool in: then ending it is theirs to do. */
  readonly owned: boolean;
  /** `host:port`, for error messages (never the user or password). */
  readonly address: string;
  openListener(): PostgresListenClient;
  /**
   * Ends the pool the store opened (a pool handed in stays open): waits up to `withinMs` for its clients,
   * then destroys the sockets of those still waiting for an answer, and waits that long once more.
   */
  close(withinMs: number): Promise<void>;
}

export interface PostgresConnectionSettings {
  readonly commandTimeoutMs: number;
  /** Settings for the LISTEN connection instead of the pool's: a direct server behind PgBouncer. */
  readonly listen?: string | PostgresPoolConfig;
}

const APPLICATION_NAME = 'nestjs-distributed-lock';

/**
 * How much longer than `commandTimeoutMs` a client of the library's own pool waits for a reply before it
 * gives the connection up: the server's `statement_timeout` (a known outcome: cancelled, nothing changed)
 * comes first whenever the server can still answer.
 */
const QUERY_TIMEOUT_MARGIN_MS = 1_000;

function isPostgresPool(value: unknown): value is PostgresPool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as PostgresPool).query === 'function' &&
    typeof (value as PostgresPool).connect === 'function' &&
    typeof (value as PostgresPool).end === 'function'
  );
}

/** A server's error reply (it has a SQLSTATE): the statement ran and failed, so it changed nothing. */
export function isServerError(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string';
}

/**
 * A `postgres://` URL, pool settings, or (for the pool only) an existing pool. A refused string is shown
 * masked whole: it may be a libpq `key=value` string or carry its password anywhere.
 */
export function assertPostgresConnectionOption(name: string, value: unknown, poolAllowed = true, required = ''): void {
  if (typeof value === 'string') {
    if (/^postgres(ql)?:\/\//.test(value)) return;
    throw new LockConfigError(name, redactOptionValue(value), 'a postgres:// or postgresql:// URL (the value is not shown: it may hold a password)');
  }
  if (poolAllowed && isPostgresPool(value)) return;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return;
  throw new LockConfigError(
    name,
    value,
    (poolAllowed ? 'a PostgreSQL URL, node-postgres pool settings or a pg.Pool' : 'a PostgreSQL URL or node-postgres client settings') + required,
  );
}

type PgModule = {
  Pool: new (config: object) => PostgresPool & { on(event: string, listener: (...args: unknown[]) => void): unknown };
  Client: new (config: object) => PostgresListenClient & { host?: string; port?: number };
};

/** Loads `pg` (an optional peer) when the PostgreSQL store is actually built. */
function loadPg(): Promise<PgModule> {
  return loadOptionalPeer('pg', { option: 'store', value: 'postgres', isModule: (pg) => typeof pg.Pool === 'function' });
}

function configOf(option: string | PostgresPoolConfig): Record<string, unknown> {
  return typeof option === 'string' ? { connectionString: option } : { ...option };
}

/**
 * Opens the pool the store runs on, or wraps the user's. A pool the library opens has a statement timeout
 * of `commandTimeoutMs`, so a statement stuck on a row lock ends with a known outcome (cancelled, nothing
 * changed) instead of an unknown one; a client-side `query_timeout` a little longer, so a reply that never
 * comes (a dead peer, a lost route) ends the wait and the connection instead of holding its client (and
 * `pool.end()`) forever; and TCP keepalive, so an idle connection to a vanished server is noticed. Each of
 * these is the user's to override. It ignores idle-client errors (a restart, a failover): the next
 * statement reports them to its caller. It connects on first use, so an application that fails to start
 * leaves no socket behind.
 */
export async function createPostgresConnection(
  option: PostgresConnectionOption,
  settings: PostgresConnectionSettings,
): Promise<PostgresConnection> {
  const pg = await loadPg();
  const reused = isPostgresPool(option);
  const ownDefaults = {
    application_name: APPLICATION_NAME,
    statement_timeout: settings.commandTimeoutMs,
    query_timeout: settings.commandTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
    connectionTimeoutMillis: settings.commandTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  // The clients of the library's own pool, so close() can cut those a dead server never answers.
  const clients = new Set<unknown>();
  let pool: PostgresPool;
  let poolConfig: Record<string, unknown>;
  let ClientClass = pg.Client;
  if (reused) {
    pool = option;
    poolConfig = { ...(option.options ?? {}) };
    // pg-pool keeps its client class (and its password, non-enumerable) on the instance.
    const own = option as { Client?: PgModule['Client']; options?: { password?: unknown } };
    if (typeof own.Client === 'function') ClientClass = own.Client;
    if (own.options && 'password' in own.options) poolConfig.password = own.options.password;
  } else {
    poolConfig = { ...ownDefaults, ...configOf(option) };
    const owned = new pg.Pool(poolConfig);
    owned.on('error', ignore);
    owned.on('connect', (client) => {
      clients.add(client);
      (client as { on(event: string, listener: () => void): void }).on('error', ignore);
    });
    owned.on('remove', (client) => clients.delete(client));
    pool = owned;
  }
  const listenConfig = {
    // Dead peers are noticed by TCP keepalive instead of never: this connection only ever waits.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    connectionTimeoutMillis: settings.commandTimeoutMs,
    ...(settings.listen === undefined ? withoutPoolOnly(poolConfig) : { application_name: APPLICATION_NAME, ...configOf(settings.listen) }),
  };
  // A Client resolves host and port (URL, fields, PG* environment, defaults) without connecting.
  const probe = new ClientClass(poolConfig);
  const address = `${probe.host ?? 'localhost'}:${probe.port ?? 5432}`;
  return {
    pool,
    owned: !reused,
    address,
    openListener: () => new ClientClass(listenConfig),
    close: async (withinMs) => {
      if (reused) return;
      const ended = pool.end();
      if (await settlesWithin(ended, withinMs)) return;
      for (const client of clients) destroySocket(client);
      await settlesWithin(ended, withinMs);
    },
  };
}

/** Pool-only settings mean nothing to a single client; the statement timeout would cut nothing it runs. */
function withoutPoolOnly(config: Record<string, unknown>): Record<string, unknown> {
  const { max: _max, min: _min, idleTimeoutMillis: _idle, maxUses: _uses, maxLifetimeSeconds: _life, allowExitOnIdle: _exit, ...rest } =
    config;
  return rest;
}

function ignore(): void {}
