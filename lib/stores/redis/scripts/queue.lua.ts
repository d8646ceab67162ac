/**
 * The fair queue of one lock key, as its scripts see it (acquire-queued, queue-check, queue-leave and the
 * hand-off in release). Everything lives in the lock key's hash slot (`{tag}`), so a Cluster node serves it
 * all, and everything expires on its own:
 *
 * - `<prefix>#queue:{tag}<key>`, a list of waiters, first in line first: entries
 *   `<expiresAtMs>|<handOffTtlMs>|<instance>|<waiter>|<token>|<holder>`. `expiresAtMs` is the waiter's
 *   heartbeat deadline on its own clock (it renews it by queue checks while it waits), `handOffTtlMs` the
 *   TTL a hand-off gives it (its heartbeat lease: a waiter that crashed holds the key no longer than that),
 *   `instance` names its store's grant channel and `waiter` the wait within it. The list's own TTL
 *   ({@link QUEUE_TTL_MS}) is renewed by every queue check and now and then by hand-offs: a queue whose
 *   waiters all crashed goes away.
 * - `<prefix>#granted:{tag}<instance>`, the channel on which an instance hears about grants (`g|waiter|fence`)
 *   and about when to look again (`r|waiter|ms`) for its waiters of this hash slot.
 * - `<prefix>#fence:{tag}`, the slot's fencing counter (see fence.lua.ts).
 *
 * A waiter counts as gone once its deadline has passed on the clock of the client that looks (a releaser,
 * another waiter): clocks that disagree by more than a heartbeat lease can only make a live waiter lose its
 * place (it notices at its next check and queues again) or a dead one be handed the key for one heartbeat
 * lease, never give the key to two holders.
 */
export const QUEUE_ENTRY_PATTERN = '^(%d+)|(%d+)|([^|]*)|([^|]*)|([^|]*)|(.*)$';

/** How long a queue nobody touches lives on. */
export const QUEUE_TTL_MS = 300_000;

/** Defines the locals `queue`, `grants` (the grant channel without its instance) and `fenceKey`. */
export function queueNamesLua(lockKey: string, slotTag: string, prefixLength: string): string {
  return `
  local plen = tonumber(${prefixLength})
  local prefix = string.sub(${lockKey}, 1, plen)
  local tagged = '{' .. ${slotTag} .. '}'
  local queue = prefix .. '#queue:' .. tagged .. string.sub(${lockKey}, plen + 1)
  local grants = prefix .. '#granted:' .. tagged
  local fenceKey = prefix .. '#fence:' .. tagged`;
}
