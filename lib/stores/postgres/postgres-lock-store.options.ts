import { LockConfigError } from '../../errors/lock-config.error.js';
import { assertPostgresConnectionOption } from './postgres-client.factory.js';
import type { PostgresConnectionOption, PostgresPoolConfig } from './postgres-connection.interface.js';
import type { PostgresLockTableOptions } from './postgres-lock-table.js';
import { booleanOption } from '../../support/boolean-option.js';

/** How the store keeps the lease table small: rows that ended are deleted after a while. */
export interface PostgresSweepOptions {
  /**
   * How long a released or expired row stays before it may be deleted. While it stays, the next grant of
   * its key continues from its fencing token even if the database clock stepped back.
   * @default 60000
   */
  readonly retainMs?: number;
  /**
   * At most one sweep per this interval per store, started by an acquisition (an idle store sweeps nothing
   * and needs nothing swept).
   * @default 60000
   */
  readonly everyMs?: number;
}

/** Options of {@link PostgresLockStore.create}. */
export interface PostgresLockStoreOptions extends PostgresLockTableOptions {
  /** A `postgres://` URL, node-postgres pool settings, or a `pg.Pool` to reuse (never ended by the store). */
  readonly connection: PostgresConnectionOption;
  /**
   * Prepended to every lock key in the `name` column, like the Redis store's key prefix.
   * @default 'lock:'
   */
  readonly keyPrefix?: string;
  /**
   * How long one statement may take before its outcome counts as unknown (and is cleaned up).
   * @default 2000
   */
  readonly commandTimeoutMs?: number;
  /**
   * Create the schema, table and sequence on first use when they are missing. Set `false` when your
   * migrations own the schema (run the SQL of `postgresLockMigration()`).
   * @default true
   */
  readonly createTable?: boolean;
  /**
   * Where the one LISTEN connection goes, when not where the pool goes: behind PgBouncer in transaction
   * mode, point it at PostgreSQL itself (notifications need a session). Without it, waiters still work,
   * woken by their backoff instead of the release.
   * @default the pool's settings
   */
  readonly listen?: string | PostgresPoolConfig;
  /** @default { retainMs: 60000, everyMs: 60000 } */
  readonly sweep?: PostgresSweepOptions;
}

/** @internal {@link PostgresLockStoreOptions} after defaults and validation. */
export interface ResolvedStoreOptions {
  readonly keyPrefix: string;
  readonly commandTimeoutMs: number;
  readonly createTable: boolean;
  readonly retainMs: number;
  readonly sweepEveryMs: number;
}

/** Validates the options of `PostgresLockStore.create` once, naming the bad option. */
export function resolveStoreOptions(options: PostgresLockStoreOptions): ResolvedStoreOptions {
  if (options === null || typeof options !== 'object') throw new LockConfigError('options', options, 'an options object');
  assertPostgresConnectionOption('connection', options.connection);
  if (options.listen !== undefined) assertPostgresConnectionOption('listen', options.listen, false);
  const keyPrefix = options.keyPrefix ?? 'lock:';
  if (typeof keyPrefix !== 'string' || keyPrefix.length > 128) throw new LockConfigError('keyPrefix', keyPrefix, 'a string of at most 128 characters');
  const whole = (name: string, value: unknown, fallback: number, min: number): number => {
    const chosen = value ?? fallback;
    if (typeof chosen !== 'number' || !Number.isInteger(chosen) || chosen < min || chosen > 2_147_483_647) {
      throw new LockConfigError(name, chosen, `a whole number of milliseconds from ${min} to 2147483647`);
    }
    return chosen;
  };
  if (options.createTable !== undefined) booleanOption('createTable', options.createTable, true);
  return {
    keyPrefix,
    commandTimeoutMs: whole('commandTimeoutMs', options.commandTimeoutMs, 2_000, 1),
    createTable: options.createTable ?? true,
    retainMs: whole('sweep.retainMs', options.sweep?.retainMs, 60_000, 0),
    sweepEveryMs: whole('sweep.everyMs', options.sweep?.everyMs, 60_000, 0),
  };
}
