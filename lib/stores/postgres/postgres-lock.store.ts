import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockStore,
  RenewOutcome,
  RenewRequest,
} from '../lock-store.interface.js';
import { createPostgresConnection, isServerError, type PostgresConnection } from './postgres-client.factory.js';
import { ensureLockTable } from './postgres-lock.migration.js';
import { likePattern, PostgresLockQueries, type SqlStatement } from './postgres-lock.queries.js';
import { PostgresLockTable } from './postgres-lock-table.js';
import { resolveStoreOptions, type PostgresLockStoreOptions, type ResolvedStoreOptions } from './postgres-lock-store.options.js';
import { PostgresReleaseListener } from './postgres-release.listener.js';
import { assertOwnershipToken } from '../ownership-token.js';

/** Rows deleted per sweep statement, so each stays short; a sweep repeats until a batch comes back short. */
const SWEEP_BATCH = 1000;

/**
 * The lease protocol on PostgreSQL: a lease table (one row per key: token, fencing token, holder, expiry
 * by the database clock), single statements through a pool, one LISTEN connection for wake-ups. Because
 * the leases live next to the business rows, a transaction can check its lease and write in one commit
 * (`assertLeaseHeld`), which no Redis lock can offer.
 */
export class PostgresLockStore implements LockStore {
  private readonly queries: PostgresLockQueries;
  private readonly listener: PostgresReleaseListener;
  private tableReady?: Promise<void>;
  private nextSweepAt: number;
  private sweeping?: Promise<unknown>;
  private closing = false;

  /** Opens (or wraps) the pool, loading node-postgres on the way; connects on first use. */
  static async create(options: PostgresLockStoreOptions): Promise<PostgresLockStore> {
    const resolved = resolveStoreOptions(options);
    const table = new PostgresLockTable(options);
    const connection = await createPostgresConnection(options.connection, {
      commandTimeoutMs: resolved.commandTimeoutMs,
      listen: options.listen,
    });
    return new PostgresLockStore(connection, table, resolved);
  }

  private constructor(
    private readonly connection: PostgresConnection,
    private readonly table: PostgresLockTable,
    private readonly options: ResolvedStoreOptions,
  ) {
    this.queries = new PostgresLockQueries(table);
    this.listener = new PostgresReleaseListener(connection.openListener, options.commandTimeoutMs);
    this.nextSweepAt = Date.now() + options.sweepEveryMs;
  }

  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    const name = this.name(key);
    const pending = this.ready().then(() => this.queries.acquire(this.connection.pool, name, token, leaseMs, holder));
    // Without an answer the statement may still commit, on its connection, after a clean-up sent on
    // another: release now, and again if the late answer turns out to be a grant.
    const cleanUp = (): void => {
      this.release(key, token, 0).catch(() => undefined);
      pending.then((result) => result.acquired && this.release(key, token, 0)).catch(() => undefined);
    };
    const result = await this.call('acquire', key, pending, cleanUp);
    this.maybeSweep();
    return result;
  }

  release(key: string, token: string, keepMs: number): Promise<boolean> {
    return this.call('release', key, this.ready().then(() => this.queries.release(this.connection.pool, this.name(key), token, keepMs)));
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    if (requests.length === 0) return [];
    const rows = requests.map((request) => ({ name: this.name(request.key), token: request.token, leaseMs: request.leaseMs }));
    const described = `${requests.length} lease(s) starting with ${requests[0]!.key}`;
    const renewed = await this.call('renew', described, this.ready().then(() => this.queries.renew(this.connection.pool, rows)));
    // A request repeated in one batch joins one row once: every copy of a renewed (key, token) counts.
    const owned = new Set([...renewed].map((i) => `${rows[i]!.name}\u0000${rows[i]!.token}`));
    return rows.map((row) => owned.has(`${row.name}\u0000${row.token}`));
  }

  async onRelease(key: string, listener: () => void): Promise<() => void> {
    try {
      return await this.listener.listen(this.table.channel(this.name(key)), listener);
    } catch (error) {
      throw this.unavailable('subscribe', key, error);
    }
  }

  async inspect(key: string): Promise<HeldLock | null> {
    const state = await this.call('inspect', key, this.ready().then(() => this.queries.inspect(this.connection.pool, this.name(key))));
    return state && { key, ...state };
  }

  async list(match = '*'): Promise<HeldLock[]> {
    const { keyPrefix } = this.options;
    const rows = await this.call('list', match, this.ready().then(() => this.queries.list(this.connection.pool, likePattern(keyPrefix, match))));
    return rows
      .map(({ name, ...state }) => ({ key: name.slice(keyPrefix.length), ...state }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async forceRelease(key: string, fencingToken?: number): Promise<ForceReleaseResult> {
    const row = await this.call(
      'force-release',
      key,
      this.ready().then(() => this.queries.forceRelease(this.connection.pool, this.name(key), fencingToken)),
    );
    if (!row) return { released: false, reason: 'not-held' };
    const lock: HeldLock = { key, fencingToken: row.fencingToken, holder: row.holder, ttlMs: row.ttlMs };
    return row.taken ? { released: true, lock } : { released: false, reason: 'fencing-mismatch', current: lock };
  }

  async ping(): Promise<void> {
    await this.call('ping', '*', this.queries.ping(this.connection.pool));
  }

  /**
   * Deletes rows that ended more than `sweep.retainMs` ago, now (acquisitions also start it once per
   * `sweep.everyMs`). Returns how many rows went. Stops after the batch it is in once the store closes.
   */
  async purgeExpired(): Promise<number> {
    await this.ready();
    let deleted = 0;
    while (!this.closing) {
      const batch = await this.queries.sweep(this.connection.pool, this.options.retainMs, SWEEP_BATCH);
      deleted += batch;
      if (batch < SWEEP_BATCH) break;
    }
    return deleted;
  }

  /**
   * The statement that, run inside YOUR transaction on the database that holds the lease table, proves
   * the lease is still this grant's and pins it until that transaction ends (see `assertLeaseHeld`).
   */
  leaseCheck(lease: { readonly key: string; readonly fencingToken: number }): SqlStatement {
    return this.queries.leaseCheck(this.name(lease.key), lease.fencingToken);
  }

  /**
   * Closes the LISTEN connection and the pool the store opened, within about `commandTimeoutMs` even when
   * the server stopped answering: statements still waiting then have their connections cut (their callers
   * were already told the outcome is unknown). A sweep stops after its current batch.
   */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([this.listener.close(), this.connection.close(this.options.commandTimeoutMs)]);
  }

  private name(key: string): string {
    return this.options.keyPrefix + key;
  }

  /** The table check runs once; a failure (database down) is not cached, the next statement retries. */
  private ready(): Promise<void> {
    this.tableReady ??= ensureLockTable(this.connection.pool, this.table, this.options.createTable).catch((error: unknown) => {
      this.tableReady = undefined;
      throw error;
    });
    return this.tableReady;
  }

  private maybeSweep(): void {
    const now = Date.now();
    if (this.sweeping || now < this.nextSweepAt) return;
    this.nextSweepAt = now + this.options.sweepEveryMs;
    this.sweeping = this.purgeExpired()
      .catch(() => undefined)
      .finally(() => (this.sweeping = undefined));
  }

  private call<T>(operation: string, key: string, pending: Promise<T>, onUnknownOutcome?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        onUnknownOutcome?.();
        reject(this.unavailable(operation, key, new Error(`no answer within ${this.options.commandTimeoutMs} ms`)));
      }, this.options.commandTimeoutMs);
      timer.unref();
      pending.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          // An error reply means the statement ran and changed nothing; anything else (a connection lost
          // mid-statement) may have committed.
          if (!isServerError(error)) onUnknownOutcome?.();
          reject(this.unavailable(operation, key, error));
        },
      );
    });
  }

  /**
   * The caller learns which server and why, never more: node-postgres errors can carry the client (whose
   * settings include the password) and statement parameters (ownership tokens), so only the message and
   * SQLSTATE are kept.
   */
  private unavailable(operation: string, key: string, error: unknown): LockStoreUnavailableError {
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown } | null)?.code;
    const cause = new Error(`PostgreSQL at ${this.connection.address}: ${message}${typeof code === 'string' ? ` (${code})` : ''}`);
    return new LockStoreUnavailableError(operation, key, { cause });
  }
}
