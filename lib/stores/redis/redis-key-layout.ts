import calculateSlot from 'cluster-key-slot';
import { RESERVED_KEY_PREFIX } from '../../keys/lock-key.js';

const HASH_SLOTS = 16384;
let slotTags: string[] | undefined;

/**
 * For every Redis Cluster hash slot, a short string whose CRC16 lands in that slot. Built once (about 170k
 * CRCs, a few milliseconds) the first time a fencing counter key is needed; it is fixed data, not state.
 */
function slotTag(slot: number): string {
  if (!slotTags) {
    const tags = new Array<string>(HASH_SLOTS);
    for (let i = 0, filled = 0; filled < HASH_SLOTS; i++) {
      const candidate = i.toString(36);
      const candidateSlot = calculateSlot(candidate);
      if (tags[candidateSlot] === undefined) {
        tags[candidateSlot] = candidate;
        filled++;
      }
    }
    slotTags = tags;
  }
  return slotTags[slot]!;
}

/**
 * Where each Redis key of a lock lives.
 *
 * Fencing counters are kept per hash slot, not per lock key: a script may only touch keys of one slot, and
 * a per-key counter would leave one key behind forever for every lock key ever used. With one counter per
 * slot (at most 16384 per prefix) memory stays bounded however many distinct keys are locked, and a given
 * lock key always reads the same counter, so its tokens still strictly increase.
 */
export class RedisKeyLayout {
  constructor(private readonly prefix: string) {}

  lockKey(key: string): string {
    return this.prefix + key;
  }

  fenceKey(lockKey: string): string {
    return `${this.prefix}${RESERVED_KEY_PREFIX}fence:{${slotTag(calculateSlot(lockKey))}}`;
  }

  /**
   * Where a lock's releases are announced. The channel carries the lock key's hash slot as its hash tag:
   * SPUBLISH (sharded pub/sub, or a managed service that turns PUBLISH into it) may only announce on a
   * channel of the slot the script runs in.
   */
  releaseChannel(lockKey: string): string {
    return `${this.prefix}${RESERVED_KEY_PREFIX}released:{${slotTag(calculateSlot(lockKey))}}${lockKey.slice(this.prefix.length)}`;
  }

  /** The user key of a lock key, or undefined for the library's own keys and keys of other prefixes. */
  userKey(redisKey: string): string | undefined {
    if (!redisKey.startsWith(this.prefix)) return undefined;
    const key = redisKey.slice(this.prefix.length);
    return key.startsWith(RESERVED_KEY_PREFIX) ? undefined : key;
  }

  slotOf(lockKey: string): number {
    return calculateSlot(lockKey);
  }
}
