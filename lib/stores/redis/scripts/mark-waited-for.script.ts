import { markWaitedForLua } from './lock-value.js';
import { defineScript } from './redis-script.js';

/**
 * KEYS[1] lock key. Marks the current holder's lock value as waited for, so that its release is announced
 * on the release channel (an unmarked release announces nothing, see lock-value.ts). Run once a release
 * listener is subscribed: from then on the holder's release is heard, as is the release of every later
 * holder an acquire attempt was turned away by (the attempt marks it).
 */
export const MARK_WAITED_FOR_SCRIPT = defineScript({
  lua: `
local value = redis.pcall('GET', KEYS[1])${markWaitedForLua('KEYS[1]', 'value')}
return 1
`,
  numKeys: 1,
  keysAndArgs: (input: { readonly lockKey: string }) => [input.lockKey],
  parse: (): void => undefined,
});
