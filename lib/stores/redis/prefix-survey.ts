import type { PrefixCount, PrefixSurvey, PrefixSurveyLimits } from '../lock-store.interface.js';
import { RESERVED_KEY_PREFIX } from '../../keys/lock-key.js';
import type { RedisCommands } from './commands/redis-commands.js';
import { scanPrimaries } from './connection/redis-nodes.js';
import { RedisKeyLayout } from './redis-key-layout.js';
import { INSPECT_SCRIPT } from './scripts/inspect.script.js';

/** Keys looked at by default: a few SCAN steps, enough for a server that holds a few applications' locks. */
const DEFAULT_MAX_KEYS = 10_000;

/** Keys inspected at most (one script call each): enough to tell "3 held" from "none". */
const MAX_INSPECTED = 1_000;

/** Inspections in flight at once, so a large candidate set neither queues a thousand calls nor crawls. */
const INSPECT_BATCH = 50;

/**
 * Held locks under other key prefixes than `ownPrefix`, for the runbook's hint. Prefixes are named by the
 * fencing counters found (`<prefix>#fence:{tag}`: every grant writes one, so every prefix that ever granted
 * has them, and they name the prefix exactly, which a lock key alone cannot: `shop:lock:order:1` could be
 * `shop:` + `lock:order:1`). A key under one of them counts when the inspect script reads it as a lock of
 * this library's format (see scripts/lock-value.ts); nothing of the value but that is kept, so no token
 * leaves this function. Bounded: one SCAN walk of at most `maxKeys` keys, at most {@link MAX_INSPECTED}
 * inspections; `complete` says whether either bound was reached.
 */
export async function heldUnderOtherPrefixes(commands: RedisCommands, ownPrefix: string, limits: PrefixSurveyLimits = {}): Promise<PrefixSurvey> {
  const maxKeys = limits.maxKeys ?? DEFAULT_MAX_KEYS;
  const scanned = await commands.run('list', '*', undefined, (client) => scanPrimaries(client, '*', maxKeys));
  const prefixes = new Set<string>();
  for (const key of scanned.keys) {
    const prefix = RedisKeyLayout.prefixOfFenceKey(key);
    if (prefix !== undefined && prefix !== ownPrefix) prefixes.add(prefix);
  }
  // The longest prefix a key starts with is its own: `shop:lock:x` belongs to `shop:lock:`, not `shop:`.
  const longestFirst = [...prefixes].sort((a, b) => b.length - a.length);
  const candidates: Array<{ key: string; prefix: string }> = [];
  for (const key of scanned.keys) {
    const prefix = longestFirst.find((p) => key.startsWith(p));
    if (prefix !== undefined && !key.startsWith(RESERVED_KEY_PREFIX, prefix.length)) candidates.push({ key, prefix });
  }
  const inspected = candidates.slice(0, MAX_INSPECTED);
  const counts = new Map<string, number>();
  for (let i = 0; i < inspected.length; i += INSPECT_BATCH) {
    const batch = inspected.slice(i, i + INSPECT_BATCH);
    const states = await Promise.all(batch.map(({ key, prefix }) => commands.runScript('inspect', key.slice(prefix.length), INSPECT_SCRIPT, { lockKey: key })));
    batch.forEach(({ prefix }, j) => {
      if (states[j]) counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
    });
  }
  const found: PrefixCount[] = [...counts].map(([prefix, held]) => ({ prefix, held }));
  found.sort((a, b) => b.held - a.held || (a.prefix < b.prefix ? -1 : 1));
  return { prefixes: found, complete: scanned.complete && inspected.length === candidates.length };
}
