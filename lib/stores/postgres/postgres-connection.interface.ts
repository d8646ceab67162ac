/**
 * node-postgres is an optional peer dependency: it is loaded (dynamic `import('pg')`) only when a PostgreSQL
 * store is created, and no public type here names it, so applications without `pg` (and without
 * `@types/pg`) build and run. The shapes below are the parts of `pg` the store uses; a `pg.Pool` and a
 * `pg.PoolConfig` fit them.
 */

/** Rows and count of one statement, as node-postgres returns them. */
export interface PostgresQueryResult {
  /** `any`, as node-postgres types them: each query narrows its own rows. */
  readonly rows: any[];
  readonly rowCount: number | null;
}

/** A client checked out of a pool (`pg.PoolClient`). */
export interface PostgresPoolClient {
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
  release(destroy?: Error | boolean): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
}

/** A node-postgres `Pool` (or anything with its `query`/`connect`/`end`). */
export interface PostgresPool {
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
  connect(): Promise<PostgresPoolClient>;
  end(): Promise<void>;
  /** The pool's connection settings (`pg.Pool#options`): the LISTEN connection is opened with them. */
  readonly options?: object;
}

/**
 * node-postgres pool settings (`pg.PoolConfig`). The library's own pool fills in `statement_timeout` and
 * `connectionTimeoutMillis` (both `commandTimeoutMs`), `query_timeout` (`commandTimeoutMs` + 1 s: a reply
 * that never comes gives its connection up), `keepAlive: true` and `application_name` unless you set them;
 * set `statement_timeout: 0` behind a PgBouncer that rejects unknown startup parameters.
 */
export interface PostgresPoolConfig {
  readonly connectionString?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly user?: string | undefined;
  readonly password?: string | (() => string | Promise<string>) | undefined;
  readonly database?: string | undefined;
  readonly ssl?: boolean | object | undefined;
  readonly application_name?: string | undefined;
  readonly fallback_application_name?: string | undefined;
  readonly statement_timeout?: false | number | undefined;
  readonly query_timeout?: number | undefined;
  readonly lock_timeout?: number | undefined;
  readonly idle_in_transaction_session_timeout?: number | undefined;
  readonly connectionTimeoutMillis?: number | undefined;
  readonly keepAlive?: boolean | undefined;
  readonly keepAliveInitialDelayMillis?: number | undefined;
  readonly options?: string | undefined;
  readonly client_encoding?: string | undefined;
  readonly enableChannelBinding?: boolean | undefined;
  readonly sslnegotiation?: 'postgres' | 'direct' | undefined;
  readonly pipeline?: boolean | undefined;
  readonly stream?: unknown;
  readonly types?: unknown;
  readonly max?: number | undefined;
  readonly min?: number | undefined;
  readonly idleTimeoutMillis?: number | null | undefined;
  readonly maxUses?: number | undefined;
  readonly maxLifetimeSeconds?: number | undefined;
  readonly allowExitOnIdle?: boolean | undefined;
  readonly log?: ((...messages: any[]) => void) | undefined;
  readonly Promise?: unknown;
  readonly Client?: unknown;
  readonly onConnect?: unknown;
  readonly verify?: unknown;
}

/** A `postgres://` URL, pool settings, or an existing `pg.Pool` to reuse (never closed by the store). */
export type PostgresConnectionOption = string | PostgresPoolConfig | PostgresPool;

/** The dedicated connection that LISTENs for releases (a `pg.Client`). */
export interface PostgresListenClient {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  removeAllListeners(): unknown;
}
