import { refuseForeignConnection, type LockStoreKindDefinition } from '../lock-store-kind.interface.js';
import { assertPostgresConnectionOption } from './postgres-client.factory.js';
import type { PostgresConnectionOption } from './postgres-connection.interface.js';
import { PostgresLockStore } from './postgres-lock.store.js';

/** The module options of `store: 'postgres'`. */
export interface PostgresModuleOptions {
  /**
   * The PostgreSQL database for `store: 'postgres'`: a `postgres://` URL, node-postgres pool settings, or a
   * `pg.Pool` to reuse (the module then never ends it). Leases go to the table `distributed_locks`, created
   * on first use; construct a `PostgresLockStore` yourself for another schema or table. Requires `pg`.
   */
  postgres?: PostgresConnectionOption;
}

/** `store: 'postgres'`: a lease table with a fencing sequence and LISTEN/NOTIFY wake-ups (docs/stores.md). */
export const postgresStoreKind: LockStoreKindDefinition<'postgres', PostgresConnectionOption> = {
  name: 'postgres',
  optionNames: ['postgres'],
  storeClassName: 'PostgresLockStore',
  resolve: (options) => {
    assertPostgresConnectionOption('postgres', options.postgres, true, " (required when store is 'postgres')");
    return options.postgres as PostgresConnectionOption;
  },
  refuseForeign: (options, chosen) => refuseForeignConnection('postgres', 'postgres', options, chosen),
  create: (connection, { keyPrefix, commandTimeoutMs }) => PostgresLockStore.create({ connection, keyPrefix, commandTimeoutMs }),
  runbook: {
    flag: 'postgres',
    env: 'DATABASE_URL',
    address: '<postgres:// URL>',
    // Reads the lease table the applications use; an operator's tool never creates one.
    open: (url, { keyPrefix, commandTimeoutMs }) => PostgresLockStore.create({ connection: url, keyPrefix, commandTimeoutMs, createTable: false }),
  },
};
