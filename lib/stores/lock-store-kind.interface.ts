import { LockConfigError } from '../errors/lock-config.error.js';
import type { LockStore } from './lock-store.interface.js';

/** What every store is built with besides the options its kind reads itself. */
export interface StoreBuildSettings {
  /** The module's `keyPrefix`: the store's namespace. */
  readonly keyPrefix: string;
  /** How long one store call may take before its outcome counts as unknown. */
  readonly commandTimeoutMs: number;
}

/** What the module builds its store with: the common settings and the module's lease length. */
export interface ModuleStoreSettings extends StoreBuildSettings {
  /** The module's `leaseMs`: a store may check at startup that its server can keep leases that short. */
  readonly leaseMs: number;
}

/** How the runbook command line opens a store of this kind: `--<flag> <address>`, or `$<env>`. */
export interface RunbookAccess {
  /** The flag that names the store's address, without dashes: `redis` for `--redis <url>`. */
  readonly flag: string;
  /** Used when the flag is not given. */
  readonly env: string;
  /** For the usage text: `<url>`. */
  readonly address: string;
  /**
   * Checks an address typed on the command line before anything connects; a refused one is named in the
   * error masked, as it may carry a password.
   */
  checkAddress?(address: string): void;
  /** Opens the store; an operator's tool never creates tables or other state. */
  open(address: string, settings: StoreBuildSettings): Promise<LockStore>;
}

/**
 * One kind of store the module builds from its options (`store: '<name>'`): which module options it reads,
 * how they are checked at startup, how its store is made, how the runbook reaches it, and what telemetry
 * calls it. Each store folder defines its own; `stores/registry/` lists them, and nothing else knows which
 * stores exist.
 */
export interface LockStoreKindDefinition<Name extends string = string, Settings = unknown> {
  readonly name: Name;
  /** The module options only this kind reads (its connection first, if it has one). */
  readonly optionNames: readonly string[];
  /** The class of its stores: a store handed in as an instance is reported under this kind's name. */
  readonly storeClassName: string;
  /** Checks, at startup, the options this kind reads when it is chosen; returns what `create` needs. */
  resolve(options: Readonly<Record<string, unknown>>): Settings;
  /**
   * Refuses, at startup, options of this kind that are set while another store is chosen (`chosen`: that
   * store as the message names it, `'memory'`, `'postgres'`, or 'a LockStore instance'). A forgotten
   * `store` is a mistake, never silently ignored.
   */
  refuseForeign(options: Readonly<Record<string, unknown>>, chosen: string): void;
  /**
   * Builds the store. A value its server turns out not to take (checked when the server answers at
   * startup) rejects with `LockConfigError` naming the option, after closing what it opened.
   */
  create(settings: Settings, build: ModuleStoreSettings): LockStore | Promise<LockStore>;
  readonly runbook?: RunbookAccess;
}

/**
 * The common rule for a kind's connection option set for another store: refused without printing it (it
 * may carry a password). `store: 'memory'` is the exception: a test or an environment switch may flip to
 * it and keep the rest of the configuration.
 */
export function refuseForeignConnection(option: string, kind: string, options: Readonly<Record<string, unknown>>, chosen: string): void {
  if (options[option] === undefined || chosen === "'memory'") return;
  throw new LockConfigError(option, '(set)', `only with store: '${kind}'; store is ${chosen}`);
}

/**
 * A store whose kind checks, at startup, that its server takes what the options ask (a lease length, a
 * replica acknowledgement): a refusal (`LockConfigError`) closes the store and fails the start; a server
 * that does not answer now is left for the first call to report (the application still starts).
 */
export async function checkedAtStartup<S extends LockStore>(store: S, check: (store: S) => Promise<void>): Promise<S> {
  try {
    await check(store);
  } catch (error) {
    if (error instanceof LockConfigError) {
      await store.close();
      throw error;
    }
  }
  return store;
}
