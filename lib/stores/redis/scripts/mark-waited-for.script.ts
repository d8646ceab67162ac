import type { RedisClient } from '../connection/redis-client.js';
import { RedisScript } from './define-script.js';
import { markWaitedForLua } from './lock-value.js';

/**
 * KEYS[1] lock key. Marks the current holder's lock value as waited for, so that its release is announced
 * on the release channel (an unmarked release announces nothing, see lock-value.ts). Run once a release
 * listener is subscribed: from then on the holder's release is heard, as is the release of every later
 * holder an acquire attempt was turned away by (the attempt marks it).
 */
const script = new RedisScript(`
local value = redis.pcall('GET', KEYS[1])${markWaitedForLua('KEYS[1]', 'value')}
return 1
`);

export async function markWaitedForScript(client: RedisClient, lockKey: string): Promise<void> {
  await script.send(client, 1, [lockKey]);
}
