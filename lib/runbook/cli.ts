#!/usr/bin/env node
import { LockConfigError } from '../errors/lock-config.error.js';
import { LOCK_MODULE_DEFAULTS } from '../options/lock-module-options.defaults.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import type { RunbookAccess } from '../stores/lock-store-kind.interface.js';
import { RUNBOOK_STORES } from '../stores/registry/lock-store-registry.js';
import { parseArguments, UsageError } from './cli-arguments.js';
import { terminalSafe } from './key-display.js';
import { LockRunbook, type RunbookLock } from './lock-runbook.js';
import { nothingHeldLine } from './prefix-hint.js';

/** How long one store command of the runbook may take: an operator waits, a SCAN of a big keyspace takes a while. */
const RUNBOOK_COMMAND_TIMEOUT_MS = 10_000;

const USAGE = `Usage: nestjs-distributed-lock <command> ${RUNBOOK_STORES.map((s) => `--${s.flag} ${s.address}`).join(' | ')} [--prefix ${LOCK_MODULE_DEFAULTS.keyPrefix}]
  list [glob]                                    held locks: key, holder, fencing token, TTL (readers, writers
                                                 and permit holders one line each, named read/write/permits)
  inspect <key>                                  one lock (typed as stored, or as the user wrote it)
  force-release <key> [--fencing-token N] --confirm
                                                 delete a held lock (read the warning first); with
                                                 --fencing-token, only if that grant still holds it
Options take a value as "--name value" or "--name=value". ${RUNBOOK_STORES.map((s) => `--${s.flag} defaults to $${s.env}`).join('; ')}.`;

const WARNING = `A lock that looks stuck may belong to a holder that is still running (GC pause, partitioned pod).
Before force-releasing: stop or isolate that holder, check its fencing token and TTL and the business data.
Whatever it still writes must be refused by the fencing token at the resource. Pass the fencing token you
inspected (--fencing-token N) so that a holder that took over since is left alone. Re-run with --confirm.`;

const VALUE_FLAGS = new Set(['prefix', 'fencing-token', ...RUNBOOK_STORES.map((store) => store.flag)]);
const SWITCH_FLAGS = new Set(['confirm', 'help']);

function describe(lock: RunbookLock): string {
  const stored = terminalSafe(lock.key);
  const shown = lock.displayKey === stored ? stored : `${stored} (${lock.displayKey})`;
  const matched = lock.matchedAs ? `\tmatched=${lock.matchedAs}` : '';
  // A read/write lock or a semaphore is listed once per holder, each line naming its shape.
  const shape = lock.shape === undefined ? '' : `\t${lock.shape}`;
  return `${shown}${shape}\tholder=${terminalSafe(lock.holder)}\tfencing=${lock.fencingToken}\tttl=${lock.ttlMs}ms${matched}`;
}

/** The store the flags (or the environment) name; exactly one. */
function chooseStore(values: ReadonlyMap<string, string>): { store: RunbookAccess; address: string } {
  const given = RUNBOOK_STORES.filter((store) => values.has(store.flag));
  if (given.length > 1) throw new UsageError(`give one store, not ${given.map((store) => `--${store.flag}`).join(' and ')}`);
  if (given[0]) return { store: given[0], address: values.get(given[0].flag)! };
  // From the environment only when it names one store: with REDIS_URL and DATABASE_URL both set, guessing
  // could force-release in the wrong store.
  const fromEnv = RUNBOOK_STORES.filter((store) => process.env[store.env]);
  if (fromEnv.length === 1) return { store: fromEnv[0]!, address: process.env[fromEnv[0]!.env]! };
  throw new UsageError(`name the store: ${RUNBOOK_STORES.map((store) => `--${store.flag}`).join(' or ')}`);
}

function fencingTokenOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const token = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(token) || token <= 0) throw new UsageError(`--fencing-token must be a positive integer, got ${value}`);
  return token;
}

async function runCommand(runbook: LockRunbook, keyPrefix: string, command: string, operands: readonly string[], fencingToken: number | undefined): Promise<number> {
  const [target] = operands;
  if (command === 'list') {
    const held = await runbook.list(target);
    console.log(held.length ? held.map(describe).join('\n') : nothingHeldLine(keyPrefix, target, await runbook.heldUnderOtherPrefixes()));
    return 0;
  }
  if (command === 'inspect') {
    const held = await runbook.inspect(target!);
    console.log(held.length ? held.map(describe).join('\n') : `${terminalSafe(target!)} is not held`);
    return 0;
  }
  const outcome = await runbook.forceRelease(target!, fencingToken);
  if (outcome.released) {
    console.log(`released ${terminalSafe(outcome.key)} (was holder=${terminalSafe(outcome.lock.holder)} fencing=${outcome.lock.fencingToken})`);
    return 0;
  }
  if (outcome.reason === 'not-held') {
    console.log(`${terminalSafe(outcome.key)} was not held`);
    return 0;
  }
  if (outcome.reason === 'ambiguous') {
    console.error(`${terminalSafe(target!)} could be any of these stored keys; repeat with the stored form:\n${outcome.candidates.map(describe).join('\n')}`);
    return 2;
  }
  const { current } = outcome;
  // Tokens only grow: a given token above the current grant's was never this key's (mistyped); below it,
  // a newer grant holds the key now, or the token given is not the one inspected.
  const why =
    fencingToken! > current.fencingToken
      ? `${fencingToken} is newer than any grant of it so far: check the token you typed`
      : `a newer grant holds it than the one with ${fencingToken}: somebody took it over since you looked, or the token you typed is not the one you inspected`;
  console.error(
    `refused: ${terminalSafe(outcome.key)} is held under fencing token ${current.fencingToken} by ${terminalSafe(current.holder)}, ` +
      `not ${fencingToken}; ${why}. Inspect it again.`,
  );
  return 1;
}

/** The runbook from the command line: list and inspect held locks, force-release one deliberately. */
async function main(args: string[]): Promise<number> {
  let parsed;
  let chosen;
  let fencingToken;
  try {
    parsed = parseArguments(args, VALUE_FLAGS, SWITCH_FLAGS);
    if (parsed.switches.has('help')) {
      console.log(USAGE);
      return 0;
    }
    const [command, ...operands] = parsed.words;
    const arity: Record<string, number> = { list: 1, inspect: 1, 'force-release': 1 };
    if (!command || !(command in arity)) throw new UsageError(command ? `unknown command ${command}` : 'no command');
    if (operands.length > arity[command]! || (command !== 'list' && operands.length === 0)) {
      throw new UsageError(`${command} takes ${command === 'list' ? 'at most one glob' : 'one key'}`);
    }
    fencingToken = fencingTokenOption(parsed.values.get('fencing-token'));
    if (fencingToken !== undefined && command !== 'force-release') throw new UsageError('--fencing-token is for force-release');
    chosen = chooseStore(parsed.values);
    chosen.store.checkAddress?.(chosen.address);
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof LockConfigError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    return 2;
  }
  const [command, ...operands] = parsed.words as [string, ...string[]];
  if (command === 'force-release' && !parsed.switches.has('confirm')) {
    console.error(WARNING);
    return 2;
  }
  let store: LockStore | undefined;
  try {
    const keyPrefix = parsed.values.get('prefix') ?? LOCK_MODULE_DEFAULTS.keyPrefix;
    store = await chosen.store.open(chosen.address, { keyPrefix, commandTimeoutMs: RUNBOOK_COMMAND_TIMEOUT_MS });
    return await runCommand(new LockRunbook(store), keyPrefix, command, operands, fencingToken);
  } finally {
    await store?.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
