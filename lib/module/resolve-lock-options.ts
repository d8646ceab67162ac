import { LockConfigError } from '../errors/lock-config.error.js';
import { isEtcdClient, isEtcdEndpoint } from '../stores/etcd/etcd-connection-option.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import { durationOption } from '../support/duration-option.js';
import { redactOptionValue } from '../support/redact-option-value.js';
import { assertRedisConnectionOption } from '../stores/redis/connection/redis-connection.option.js';
import { resolveTelemetryOptions } from '../observability/lock-telemetry.options.js';
import { assertPostgresConnectionOption } from '../stores/postgres/postgres-client.factory.js';
import { trackedTransactions } from '../transactions/transaction-scope.js';
import type { TransactionSynchronizer } from '../transactions/transaction-synchronizer.interface.js';
import { LOCK_MODULE_DEFAULTS } from './lock-module-options.defaults.js';
import type { LockModuleOptions, ResolvedLockOptions } from './lock-module-options.interface.js';
import { booleanOption } from '../support/boolean-option.js';

const KNOWN_OPTIONS = new Set<string>([
  'redis',
  'postgres',
  'etcd',
  'replicas',
  'fair',
  'shardedPubSub',
  'store',
  'keyPrefix',
  'leaseMs',
  'waitMs',
  'renewIntervalMs',
  'commandTimeoutMs',
  'retryMinDelayMs',
  'retryMaxDelayMs',
  'holder',
  'transactionSynchronizer',
  'shutdownGraceMs',
  'openTelemetry',
]);

/** Validates module options once, at startup, into the single resolved shape the rest of the code uses. */
export function resolveLockOptions(options: LockModuleOptions | undefined): ResolvedLockOptions {
  if (options === null || typeof options !== 'object') {
    throw new LockConfigError('options', options, 'an options object');
  }
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) throw new LockConfigError(name, (options as Record<string, unknown>)[name], 'no such option (typo?)');
  }
  const store = options.store ?? LOCK_MODULE_DEFAULTS.store;
  const STORE_KINDS = ['redis', 'memory', 'postgres', 'etcd'];
  if (!STORE_KINDS.includes(store as string) && !isLockStore(store)) {
    throw new LockConfigError('store', store, `'redis', 'memory', 'postgres', 'etcd' or a LockStore instance`);
  }
  if (store === 'redis') assertRedisConnectionOption(options.redis);
  if (store === 'postgres') assertPostgresConnectionOption('postgres', options.postgres, true, " (required when store is 'postgres')");
  if (store === 'etcd') assertEtcdOption(options.etcd);
  // A connection for another store than the chosen one is a mistake (a forgotten `store`), never ignored.
  // `store: 'memory'` is the exception: a test or an environment switch may flip to it and keep the rest.
  for (const kind of ['redis', 'postgres', 'etcd'] as const) {
    if (options[kind] === undefined || store === kind || store === 'memory') continue;
    const chosen = typeof store === 'string' ? `'${store}'` : 'a LockStore instance';
    throw new LockConfigError(kind, '(set)', `only with store: '${kind}'; store is ${chosen}`);
  }
  const replicas = options.replicas ?? LOCK_MODULE_DEFAULTS.replicas;
  if (!Number.isInteger(replicas) || replicas < 0 || replicas > 16) {
    throw new LockConfigError('replicas', replicas, 'a whole number of replicas from 0 to 16');
  }
  const shardedPubSub = booleanOption('shardedPubSub', options.shardedPubSub, LOCK_MODULE_DEFAULTS.shardedPubSub);
  if (store !== 'redis' && (replicas > 0 || shardedPubSub)) {
    throw new LockConfigError(replicas > 0 ? 'replicas' : 'shardedPubSub', replicas > 0 ? replicas : shardedPubSub, "only with store 'redis'");
  }
  const fair = booleanOption('fair', options.fair, LOCK_MODULE_DEFAULTS.fair);
  if (fair && store !== 'redis') {
    throw new LockConfigError('fair', fair, "only with store 'redis' (etcd's waiters queue in etcd anyway; the others have no queue)");
  }
  if (fair && replicas > 0) throw new LockConfigError('fair', fair, 'false while replicas is set (a queue hand-off is not acknowledged by replicas yet)');

  const keyPrefix = options.keyPrefix ?? LOCK_MODULE_DEFAULTS.keyPrefix;
  // eslint-disable-next-line no-control-regex
  if (typeof keyPrefix !== 'string' || keyPrefix.length > 128 || /[{}\u0000-\u001f\u007f]/.test(keyPrefix)) {
    throw new LockConfigError('keyPrefix', keyPrefix, 'a string of at most 128 characters without braces or control characters');
  }
  const leaseMs = durationOption('leaseMs', options.leaseMs ?? LOCK_MODULE_DEFAULTS.leaseMs, 10);
  const renewIntervalMs =
    options.renewIntervalMs === undefined ? undefined : durationOption('renewIntervalMs', options.renewIntervalMs, 1);
  if (renewIntervalMs !== undefined && renewIntervalMs >= leaseMs) {
    throw new LockConfigError('renewIntervalMs', renewIntervalMs, `less than leaseMs (${leaseMs})`);
  }
  const retryMinDelayMs = durationOption('retryMinDelayMs', options.retryMinDelayMs ?? LOCK_MODULE_DEFAULTS.retryMinDelayMs, 1);
  const retryMaxDelayMs = durationOption('retryMaxDelayMs', options.retryMaxDelayMs ?? LOCK_MODULE_DEFAULTS.retryMaxDelayMs, 1);
  if (retryMaxDelayMs < retryMinDelayMs) {
    throw new LockConfigError('retryMaxDelayMs', retryMaxDelayMs, `at least retryMinDelayMs (${retryMinDelayMs})`);
  }
  const holder = options.holder ?? LOCK_MODULE_DEFAULTS.holder();
  if (typeof holder !== 'string' || holder.length === 0 || holder.length > 256) {
    throw new LockConfigError('holder', holder, 'a non-empty string of at most 256 characters');
  }
  const transactionSynchronizer = options.transactionSynchronizer ?? trackedTransactions;
  if (!isTransactionSynchronizer(transactionSynchronizer)) {
    throw new LockConfigError(
      'transactionSynchronizer',
      transactionSynchronizer,
      'an object with isTransactionActive, beforeCommit and afterCompletion functions',
    );
  }
  return {
    redis: options.redis,
    postgres: options.postgres,
    etcd: options.etcd,
    replicas,
    fair,
    shardedPubSub,
    store,
    keyPrefix,
    leaseMs,
    waitMs: durationOption('waitMs', options.waitMs ?? LOCK_MODULE_DEFAULTS.waitMs, 0),
    renewIntervalMs,
    commandTimeoutMs: durationOption('commandTimeoutMs', options.commandTimeoutMs ?? LOCK_MODULE_DEFAULTS.commandTimeoutMs, 1),
    retryMinDelayMs,
    retryMaxDelayMs,
    holder,
    transactionSynchronizer,
    shutdownGraceMs: durationOption('shutdownGraceMs', options.shutdownGraceMs ?? LOCK_MODULE_DEFAULTS.shutdownGraceMs, 0),
    openTelemetry: resolveTelemetryOptions(options.openTelemetry),
  };
}

const STORE_METHODS = ['acquire', 'release', 'renew', 'onRelease', 'inspect', 'list', 'forceRelease', 'ping', 'close'] as const;

function isLockStore(value: unknown): value is LockStore {
  return typeof value === 'object' && value !== null && STORE_METHODS.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');
}

function isTransactionSynchronizer(value: unknown): value is TransactionSynchronizer {
  const candidate = value as TransactionSynchronizer | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.isTransactionActive === 'function' &&
    typeof candidate.beforeCommit === 'function' &&
    typeof candidate.afterCompletion === 'function'
  );
}

function assertEtcdOption(etcd: unknown): void {
  const expected = "an etcd client URL (http:// or https://, without credentials: use the auth option), a non-empty list of them, etcd3 options with hosts, or an Etcd3 client (required when store is 'etcd')";
  if (isEtcdEndpoint(etcd) || isEtcdClient(etcd)) return;
  if (Array.isArray(etcd) && etcd.length > 0 && etcd.every(isEtcdEndpoint)) return;
  if (typeof etcd === 'object' && etcd !== null && !Array.isArray(etcd)) {
    const { hosts } = etcd as { hosts?: unknown };
    const list = typeof hosts === 'string' ? [hosts] : hosts;
    if (Array.isArray(list) && list.length > 0 && list.every((host) => typeof host === 'string' && /^\S+$/.test(host) && !host.includes('@'))) return;
  }
  // A refused string may carry a password anywhere: it is masked whole; valid endpoints carry none.
  throw new LockConfigError('etcd', redactOptionValue(etcd, isEtcdEndpoint), expected);
}
