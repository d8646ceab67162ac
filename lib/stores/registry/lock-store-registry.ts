import { etcdStoreKind, type EtcdModuleOptions } from '../etcd/etcd.store-kind.js';
import type { LockStore } from '../lock-store.interface.js';
import type { LockStoreKindDefinition, RunbookAccess } from '../lock-store-kind.interface.js';
import { memoryStoreKind } from '../memory/memory.store-kind.js';
import { postgresStoreKind, type PostgresModuleOptions } from '../postgres/postgres.store-kind.js';
import { redisStoreKind, type RedisModuleOptions } from '../redis/redis.store-kind.js';
import { redlockStoreKind, type RedlockModuleOptions } from '../redlock/redlock.store-kind.js';
import { zookeeperStoreKind, type ZookeeperModuleOptions } from '../zookeeper/zookeeper.store-kind.js';

/**
 * Every kind of store `store: '<name>'` can name, in the order error messages list them: the one place
 * that knows which stores exist. A new store is its own folder with its `*.store-kind.ts`, one entry
 * here, and its module options in {@link StoreModuleOptions}.
 */
export const LOCK_STORE_KINDS = [redisStoreKind, memoryStoreKind, postgresStoreKind, etcdStoreKind, zookeeperStoreKind, redlockStoreKind] as const;

/** Which lease store backs the module: the name of one of {@link LOCK_STORE_KINDS}. */
export type LockStoreKind = (typeof LOCK_STORE_KINDS)[number]['name'];

/** The module options every store kind reads (its connection, its own switches). */
export type StoreModuleOptions = RedisModuleOptions & PostgresModuleOptions & EtcdModuleOptions & ZookeeperModuleOptions & RedlockModuleOptions;

const BY_NAME = new Map<string, LockStoreKindDefinition>(LOCK_STORE_KINDS.map((kind) => [kind.name, kind as LockStoreKindDefinition]));

/** The kind named `name`, if there is one. */
export function storeKindNamed(name: unknown): LockStoreKindDefinition | undefined {
  return typeof name === 'string' ? BY_NAME.get(name) : undefined;
}

/**
 * The kind a store instance handed in is of, by its class name (so that asking never loads a store
 * implementation), or undefined for a store of the user's own.
 */
export function storeKindOfInstance(store: LockStore): LockStoreKind | undefined {
  const className = store.constructor?.name;
  return LOCK_STORE_KINDS.find((kind) => kind.storeClassName === className)?.name;
}

/** The stores the runbook command line can open, with their flags. */
export const RUNBOOK_STORES: readonly RunbookAccess[] = LOCK_STORE_KINDS.flatMap((kind) =>
  'runbook' in kind && kind.runbook ? [kind.runbook] : [],
);
