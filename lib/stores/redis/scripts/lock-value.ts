/**
 * What a lock key holds, written and read only by the scripts in this folder: one string,
 *
 *     <flag><token>|<fence>|<holder>
 *
 * - `flag`, one character: `-` nobody waits; `w` a waiter that retries on release notifications was turned
 *   away (the release announces itself on the release channel); `q` waiters stand in the key's fair queue
 *   (the release hands the key to the first of them). A release looks at it to do no more than it must: the
 *   common release is a read and a delete, like the raw protocol's.
 * - `token`, the holder's ownership token (never contains `|`; the store refuses one that does).
 * - `fence`, its fencing token, decimal digits.
 * - `holder`, who holds it, for the runbook (may contain anything, it comes last).
 *
 * A string (one `SET … NX PX` creates it with its TTL) costs the grant one write instead of a hash's field
 * writes plus an expiry. Earlier versions of this library stored a hash (`t`, `f`, `h`) under the same
 * key: the scripts read one as a held lock of somebody else's (never granted over, never released or
 * renewed by a token it does not carry), and `inspect`, `list` and `force-release` read both, so a rolling
 * upgrade with both versions on one Redis never gives a key to two holders.
 */
export const LOCK_VALUE_SEPARATOR = '|';

/**
 * Lua that marks the lock value `value` (read from `lockKey`) as waited for (`w`), so that its release is
 * announced on the release channel; only a value of this library's format with no mark yet is touched
 * (SETRANGE keeps the TTL), anything else is left as it is.
 */
export function markWaitedForLua(lockKey: string, value: string): string {
  return `
if type(${value}) == 'string' and string.find(${value}, '^%-[^|]+|%d+|') then
  redis.call('SETRANGE', ${lockKey}, 0, 'w')
end`;
}

/**
 * Lua condition: the lock value `value` (a string: check the type first) is held by `token`, i.e. the token
 * fills it from the second character up to the first `|` (a token that merely starts another never matches).
 * Every script that releases, renews, hands on or re-grants asks this, in this one form.
 */
export function heldByLua(value: string, token: string): string {
  return `(string.find(${value}, ${token}, 2, true) == 2 and string.byte(${value}, #${token} + 2) == 124)`;
}

/** Lua expression: the fencing token (digits) of `value`, held by `token` (see {@link heldByLua}). */
export function fenceOfLua(value: string, token: string): string {
  return `string.match(${value}, '^(%d+)', #${token} + 3)`;
}

/** The fields of a lock value, or undefined for a value this library did not write. */
export function parseLockValue(value: string): { flag: string; token: string; fencingToken: number; holder: string } | undefined {
  const tokenEnd = value.indexOf(LOCK_VALUE_SEPARATOR, 1);
  const fenceEnd = tokenEnd < 0 ? -1 : value.indexOf(LOCK_VALUE_SEPARATOR, tokenEnd + 1);
  if (fenceEnd < 0 || !'-wq'.includes(value[0]!)) return undefined;
  const fence = value.slice(tokenEnd + 1, fenceEnd);
  if (!/^\d+$/.test(fence)) return undefined;
  return { flag: value[0]!, token: value.slice(1, tokenEnd), fencingToken: Number(fence), holder: value.slice(fenceEnd + 1) };
}
