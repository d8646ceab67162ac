import calculateSlot from 'cluster-key-slot';
import { RESERVED_KEY_PREFIX } from '../../keys/lock-key.js';
import { keySlot } from './key-slot.js';

const HASH_SLOTS = 16384;
/** After the reserved character: what marks a fencing counter's key. */
const FENCE_KEY_MARK = 'fence:';
/** After the reserved character: what marks the queue of a key's shaped waiters. */
export const SHARED_QUEUE_MARK = 'shared-queue:';
/**
 * A key's two fair queues (`fair: true`): plain waiters', and readers', writers' and permits'
 * (scripts/shared-queue.lua.ts), each under its mark after the reserved character.
 */
export type QueueLine = 'plain' | 'shaped';
const QUEUE_MARKS: Readonly<Record<QueueLine, string>> = { plain: 'queue:', shaped: SHARED_QUEUE_MARK };
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
  private readonly fenceKeys: Array<string | undefined> = [];

  constructor(private readonly prefix: string) {}

  /** Length of the key prefix in bytes (Lua's `string.sub` counts bytes): scripts split lock keys with it. */
  get prefixLength(): number {
    return Buffer.byteLength(this.prefix);
  }

  lockKey(key: string): string {
    return this.prefix + key;
  }

  /**
   * A short string in the lock key's hash slot. Every name a script derives for a lock (counter, queue,
   * channels) carries it as its hash tag, so they all live on the lock key's node.
   */
  slotTag(lockKey: string): string {
    return slotTag(keySlot(lockKey));
  }

  fenceKey(lockKey: string): string {
    return this.fenceKeyOfSlot(keySlot(lockKey));
  }

  /**
   * The names a fair queue's scripts use for a lock key, from one slot computation: those of its plain
   * waiters' queue, or of its shaped waiters' (`'shaped'`, see scripts/shared-queue.lua.ts), beside it in
   * the same slot.
   */
  queueNames(lockKey: string, line: QueueLine = 'plain'): { tag: string; fenceKey: string; queueKey: string } {
    const slot = keySlot(lockKey);
    const tag = slotTag(slot);
    return { tag, fenceKey: this.fenceKeyOfSlot(slot), queueKey: this.queueKeyOfTag(tag, lockKey, line) };
  }

  /** One string per slot, made once: every acquisition needs one. */
  private fenceKeyOfSlot(slot: number): string {
    return (this.fenceKeys[slot] ??= this.fenceKeyOfTag(slotTag(slot)));
  }

  private fenceKeyOfTag(tag: string): string {
    return `${this.prefix}${RESERVED_KEY_PREFIX}${FENCE_KEY_MARK}{${tag}}`;
  }

  /**
   * The key prefix a fencing counter key was made for (see {@link fenceKey}), whichever application made
   * it; undefined for any other key. Every grant writes its slot's counter, so the counters name the
   * prefixes that have been used on a server.
   */
  static prefixOfFenceKey(redisKey: string): string | undefined {
    const mark = redisKey.lastIndexOf(`${RESERVED_KEY_PREFIX}${FENCE_KEY_MARK}{`);
    return mark >= 0 && redisKey.endsWith('}') ? redisKey.slice(0, mark) : undefined;
  }

  /**
   * Where a lock's releases are announced. The channel carries the lock key's hash slot as its hash tag:
   * SPUBLISH (sharded pub/sub, or a managed service that turns PUBLISH into it) may only announce on a
   * channel of the slot the script runs in.
   */
  releaseChannel(lockKey: string): string {
    return `${this.prefix}${RESERVED_KEY_PREFIX}released:{${this.slotTag(lockKey)}}${lockKey.slice(this.prefix.length)}`;
  }

  /** The fair queue of a lock key (see scripts/queue.lua.ts), or of its shaped waiters (scripts/shared-queue.lua.ts). */
  queueKey(lockKey: string, line: QueueLine = 'plain'): string {
    return this.queueKeyOfTag(this.slotTag(lockKey), lockKey, line);
  }

  private queueKeyOfTag(tag: string, lockKey: string, line: QueueLine): string {
    return `${this.prefix}${RESERVED_KEY_PREFIX}${QUEUE_MARKS[line]}{${tag}}${lockKey.slice(this.prefix.length)}`;
  }

  /** Where `instance` hears about grants to its waiters of the slot named by `tag`. */
  grantChannel(tag: string, instance: string): string {
    return `${this.prefix}${RESERVED_KEY_PREFIX}granted:{${tag}}${instance}`;
  }

  /** The user key of a lock key, or undefined for the library's own keys and keys of other prefixes. */
  userKey(redisKey: string): string | undefined {
    if (!redisKey.startsWith(this.prefix)) return undefined;
    const key = redisKey.slice(this.prefix.length);
    return key.startsWith(RESERVED_KEY_PREFIX) ? undefined : key;
  }
}
