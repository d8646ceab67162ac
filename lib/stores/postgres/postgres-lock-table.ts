import { createHash } from 'node:crypto';
import { LockConfigError } from '../../errors/lock-config.error.js';

/** Where the lease table lives. */
export interface PostgresLockTableOptions {
  /**
   * Schema of the lease table and its fencing sequence; unset means the first schema of the connection's
   * `search_path` (where your other unqualified tables go).
   * @default undefined
   */
  readonly schema?: string;
  /**
   * Name of the lease table; its sequence is `<table>_fence_seq`.
   * @default 'distributed_locks'
   */
  readonly table?: string;
}

/** Lowercase simple identifiers only, short enough for the suffixes (`_fence_seq`, `_shv1_release`) to fit 63 bytes. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,47}$/;

const quote = (identifier: string): string => `"${identifier}"`;

/** The names every statement of one store uses, validated once and quoted. */
export class PostgresLockTable {
  readonly schema: string | undefined;
  readonly table: string;
  /** `"schema"."table"` (or `"table"`), ready to splice into SQL. */
  readonly qualified: string;
  readonly sequence: string;
  /** The sequence as a regclass literal for `nextval`/`setval`. */
  readonly sequenceLiteral: string;
  /** The unique (name, fence) constraint; see the migration for why it exists. */
  readonly grantConstraint: string;
  /** Identifies this table for the DDL advisory lock and for release channel names. */
  readonly id: string;
  /** The functions of read/write locks and semaphores (see postgres-shared.functions.ts), qualified. */
  readonly sharedFunctions: { readonly acquire: string; readonly release: string; readonly renew: string; readonly drop: string };

  constructor(options: PostgresLockTableOptions = {}) {
    const { schema, table = 'distributed_locks' } = options;
    if (schema !== undefined && (typeof schema !== 'string' || !IDENTIFIER.test(schema))) {
      throw new LockConfigError('schema', schema, 'a lowercase SQL identifier (a-z, 0-9, _) of at most 48 characters');
    }
    if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
      throw new LockConfigError('table', table, 'a lowercase SQL identifier (a-z, 0-9, _) of at most 48 characters');
    }
    this.schema = schema;
    this.table = table;
    const qualify = (name: string): string => (schema ? `${quote(schema)}.${quote(name)}` : quote(name));
    this.qualified = qualify(table);
    this.sequence = qualify(`${table}_fence_seq`);
    this.sequenceLiteral = `'${this.sequence}'`;
    this.grantConstraint = quote(`${table}_grant_key`);
    this.id = schema ? `${schema}.${table}` : table;
    // `shv1`: shared holds, version 1 of the function bodies. A change to a body comes with a new number,
    // so the code never calls a body of another version under the name it knows: a table's functions are
    // only created when one of the names is missing, never brought up to date. The longest suffix (13
    // characters) fits 63 bytes after a 48-character table name.
    this.sharedFunctions = {
      acquire: qualify(`${table}_shv1_acquire`),
      release: qualify(`${table}_shv1_release`),
      renew: qualify(`${table}_shv1_renew`),
      drop: qualify(`${table}_shv1_drop`),
    };
  }

  /**
   * The NOTIFY channel of one lock row. One channel per key, so an instance hears only the releases of keys
   * it waits on; hashed, because channel names are identifiers (at most 63 bytes) and keys are longer. A
   * collision only wakes a waiter for nothing: it retries and waits again.
   */
  channel(name: string): string {
    return `lock_${createHash('sha256').update(this.id).update('\u0000').update(name).digest('hex').slice(0, 40)}`;
  }
}

/** `LISTEN "channel"`: channel names are hex digests, quoting keeps them verbatim. */
export function listenStatement(channel: string, verb: 'LISTEN' | 'UNLISTEN' = 'LISTEN'): string {
  return `${verb} ${quote(channel)}`;
}
