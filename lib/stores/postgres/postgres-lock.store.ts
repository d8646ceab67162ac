import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type {
  AcquireResult,
  ForceReleaseResult,
  HeldLock,
  LockShape,
  LockStore,
  RenewOutcome,
  RenewRequest,
} from '../lock-store.interface.js';
import { createPostgresConnection, isServerError, type PostgresConnection } from './postgres-client.factory.js';
import { ensureLockTable, LeaseTableSetupError } from './postgres-lock.migration.js';
import { likePattern, PostgresLockQueries, type SqlStatement } from './postgres-lock.queries.js';
import { PostgresLockTable } from './postgres-lock-table.js';
import { resolveStoreOptions, type PostgresLockStoreOptions, type ResolvedStoreOptions } from './postgres-lock-store.options.js';
import { PostgresReleaseListener } from './postgres-release.listener.js';
import { PostgresSharedQueries } from './postgres-shared.queries.js';
import { assertOwnershipToken } from '../ownership-token.js';

/** Rows deleted per sweep statement, so each stays short; a sweep repeats until a batch comes back short. */
const SWEEP_BATCH = 1000;

/** After the server refused the table's DDL, how long its answer stands before the DDL is tried again: doubling up to the maximum. */
const SETUP_RETRY_MIN_MS = 5_000;
const SETUP_RETRY_MAX_MS = 300_000;

/**
 * The lease protocol on PostgreSQL: a lease table (one row per key: token, fencing token, holder, expiry
 * by the database clock), single statements through a pool, one LISTEN connection for wake-ups. Because
 * the leases live next to the business rows, a transaction can check its lease and write in one commit
 * (`assertLeaseHeld`), which no Redis lock can offer.
 */
export class PostgresLockStore implements LockStore {
  private readonly queries: PostgresLockQueries;
  private readonly shared: PostgresSharedQueries;
  private readonly listener: PostgresReleaseListener;
  private tableReady?: Promise<void>;
  /** While the server's refusal of the DDL stands (see `ready`): until when, and how many in a row. */
  private setupRefusedUntil = 0;
  private setupRefusals = 0;
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
    this.shared = new PostgresSharedQueries(table);
    this.listener = new PostgresReleaseListener(connection.openListener, options.commandTimeoutMs);
    this.nextSweepAt = Date.now() + options.sweepEveryMs;
  }

  // async: a refused token rejects, as every store's answer does, rather than throwing at the call.
  async acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    return this.grant(key, token, (name) => this.queries.acquire(this.connection.pool, name, token, leaseMs, holder));
  }

  /** A read/write lock or semaphore grant, in one statement (see postgres-shared.functions.ts). */
  async acquireShared(key: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    assertOwnershipToken(token);
    return this.grant(key, token, (name) => this.shared.acquire(this.connection.pool, name, shape, token, leaseMs, holder));
  }

  /** The plain statement first (the common case, one round trip); a shaped hold's when that found nothing. */
  async release(key: string, token: string, keepMs: number): Promise<boolean> {
    // The empty string marks a shaped row's token (see postgres-shared.functions.ts): it owns nothing.
    if (token === '') return false;
    const name = this.name(key);
    return this.call(
      'release',
      key,
      this.ready().then(async () => (await this.queries.release(this.connection.pool, name, token, keepMs)) || this.shared.release(this.connection.pool, name, token, keepMs)),
    );
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    if (requests.length === 0) return [];
    const rows = requests.map((request) => ({ name: this.name(request.key), token: request.token, leaseMs: request.leaseMs })).filter((row) => row.token !== '');
    const described = `${requests.length} lease(s) starting with ${requests[0]!.key}`;
    const renewed = await this.call('renew', described, this.ready().then(() => this.renewRows(rows)));
    // A request repeated in one batch joins one row once: every copy of a renewed (key, token) counts.
    const owned = new Set(renewed.map((i) => `${rows[i]!.name}\u0000${rows[i]!.token}`));
    return requests.map((request) => owned.has(`${this.name(request.key)}\u0000${request.token}`));
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
    const name = this.name(key);
    const row = await this.call(
      'force-release',
      key,
      this.ready().then(async () => {
        const shaped = await this.shared.drop(this.connection.pool, name, fencingToken);
        if (shaped) return shaped;
        const plain = await this.queries.forceRelease(this.connection.pool, name, fencingToken);
        return plain && { taken: plain.taken, lock: { fencingToken: plain.fencingToken, holder: plain.holder, ttlMs: plain.ttlMs } };
      }),
    );
    if (!row) return { released: false, reason: 'not-held' };
    const lock: HeldLock = { key, ...row.lock };
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

  /** Runs a granting statement; every grant, granted or not, may start a sweep. */
  private async grant(key: string, token: string, statement: (name: string) => Promise<AcquireResult>): Promise<AcquireResult> {
    const pending = this.ready().then(() => statement(this.name(key)));
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

  /** Indices of the renewed rows: plain leases in one statement, then the shaped holds among the rest. */
  private async renewRows(rows: ReadonlyArray<{ readonly name: string; readonly token: string; readonly leaseMs: number }>): Promise<number[]> {
    const plain = await this.queries.renew(this.connection.pool, rows);
    const rest = rows.map((_, i) => i).filter((i) => !plain.has(i));
    if (rest.length === 0) return [...plain];
    const shaped = await this.shared.renew(this.connection.pool, rest.map((i) => rows[i]!));
    return [...plain, ...shaped.map((j) => rest[j]!)];
  }

  private name(key: string): string {
    return this.options.keyPrefix + key;
  }

  /**
   * The table check runs once; a failure to reach the database is not cached, the next statement retries.
   * The server's refusal of the DDL (no right to it, the table's lock not had in time) is the answer to
   * every call for a while, growing with each refusal: each try queues an ACCESS EXCLUSIVE request on the
   * table, which every statement on it waits behind.
   */
  private ready(): Promise<void> {
    if (this.tableReady && this.setupRefusals > 0 && Date.now() >= this.setupRefusedUntil) this.tableReady = undefined;
    this.tableReady ??= ensureLockTable(this.connection.pool, this.table, this.options.createTable).then(
      () => {
        this.setupRefusals = 0;
      },
      (error: unknown) => {
        if (error instanceof LeaseTableSetupError) {
          this.setupRefusedUntil = Date.now() + Math.min(SETUP_RETRY_MAX_MS, SETUP_RETRY_MIN_MS * 2 ** this.setupRefusals);
          this.setupRefusals++;
        } else {
          this.tableReady = undefined;
        }
        throw error;
      },
    );
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
