import { performance } from 'node:perf_hooks';

/**
 * This client's clock in µs since 1970, for fencing tokens (see scripts/fence.lua.ts): the wall clock's
 * milliseconds, so it follows NTP like every other instance's, with the monotonic clock's sub-millisecond
 * digits below them, so grants a few µs apart rarely meet the counter ahead of the clock (which costs the
 * script a second write). It may step back by less than a millisecond at a millisecond boundary: the counter
 * keeps tokens strictly increasing regardless, the clock is only their floor.
 */
export function clockMicros(): number {
  return Date.now() * 1000 + (Math.floor(performance.now() * 1000) % 1000);
}
