/**
 * Lua that issues the next fencing token of a hash slot's counter (the lock key's slot; see
 * `RedisKeyLayout.fenceKey`), shared by every script that grants: a fresh acquire, a release that hands
 * the key to the next waiter in line, a queue check that finds the key free. Expects `counterKey` (the
 * counter) and `clock` (the granting client's clock in µs, decimal digits) and leaves the token in `fence`,
 * as decimal digits.
 *
 * The token is a hybrid clock, max(counter + 1, clock): one `GETSET` in the common case (the clock is
 * ahead of the counter), a second write when it is not. The counter makes tokens strictly increasing
 * whatever the clocks do (every grant leaves the counter at its token, and the counter never goes down);
 * the clock makes them keep increasing when the counter is lost or lags (an asynchronous failover,
 * eviction, FLUSHALL), as long as no client's clock is behind the clock of the client that made the lost
 * grants by more than the time between the two grants (a failover takes seconds).
 *
 * Numbers: Lua 5.1 numbers are doubles, exact for integers below 2^53 (µs since 1970 are ~1.8e15, good for
 * two more centuries). The clock arrives as digits and goes back as they are; a token computed in Lua is
 * written with `%.0f`, never `tostring` (`%.14g`: 1.8e15 becomes "1.8e+15") nor `%d` (a C `long`: 32 bits on
 * some builds).
 */
export function nextFenceLua(counterKey: string, clock: string): string {
  return `
local fence = ${clock}
local last = redis.call('GETSET', ${counterKey}, fence)
if last and tonumber(last) >= tonumber(fence) then
  fence = string.format('%.0f', tonumber(last) + 1)
  redis.call('SET', ${counterKey}, fence)
end`;
}
