import { LockConfigError } from '../errors/lock-config.error.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import { LOCK_STORE_KINDS, storeKindNamed } from '../stores/registry/lock-store-registry.js';
import { durationOption } from '../support/duration-option.js';
import { trackedTransactions } from '../transactions/transaction-scope.js';
import type { TransactionSynchronizer } from '../transactions/transaction-synchronizer.interface.js';
import { LOCK_MODULE_DEFAULTS } from './lock-module-options.defaults.js';
import type { LockModuleOptions, ResolvedLockOptions } from './lock-module-options.interface.js';
import { resolveTelemetryOptions } from './lock-telemetry.options.js';

/** The options every application reads, whichever store it runs on; each store kind names its own. */
const CORE_OPTIONS = [
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
];

const KNOWN_OPTIONS = new Set<string>([...CORE_OPTIONS, ...LOCK_STORE_KINDS.flatMap((kind) => kind.optionNames)]);

const STORE_NAMES = LOCK_STORE_KINDS.map((kind) => `'${kind.name}'`);

/** Validates module options once, at startup, into the single resolved shape the rest of the code uses. */
export function resolveLockOptions(options: LockModuleOptions | undefined): ResolvedLockOptions {
  if (options === null || typeof options !== 'object') {
    throw new LockConfigError('options', options, 'an options object');
  }
  const raw = options as Readonly<Record<string, unknown>>;
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) throw new LockConfigError(name, raw[name], 'no such option (typo?)');
  }
  const store = options.store ?? LOCK_MODULE_DEFAULTS.store;
  const kind = storeKindNamed(store);
  if (!kind && !isLockStore(store)) {
    throw new LockConfigError('store', store, `${STORE_NAMES.join(', ')} or a LockStore instance`);
  }
  const storeSettings = kind?.resolve(raw);
  // Options of another store than the chosen one are a mistake (a forgotten `store`), never ignored.
  const chosen = kind ? `'${kind.name}'` : 'a LockStore instance';
  for (const other of LOCK_STORE_KINDS) if (other !== kind) other.refuseForeign(raw, chosen);

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
    store: store as ResolvedLockOptions['store'],
    storeSettings,
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
