/** The three digits below a millisecond, for every count 0–999. */
const BELOW_MS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

let lastMs = 0;
let lastMsDigits = '0';
let withinMs = 0;

/**
 * This client's clock in µs since 1970, as decimal digits, for fencing tokens (see scripts/fence.lua.ts):
 * the wall clock's milliseconds, so it follows NTP like every other instance's, then a count of the calls
 * made within that millisecond, so this process never sends the same value twice (the grants it makes in
 * one millisecond would otherwise meet the counter ahead of the clock, which costs the script a second
 * write). The clock is only the tokens' floor: the counter keeps them strictly increasing whatever it does.
 *
 * Built from cached digits: formatting a 16-digit number on every acquisition and release costs more than
 * everything else the client does for them.
 */
export function clockMicros(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastMsDigits = String(ms);
    withinMs = 0;
  } else if (withinMs < 999) {
    withinMs++;
  }
  return lastMsDigits + BELOW_MS[withinMs]!;
}
