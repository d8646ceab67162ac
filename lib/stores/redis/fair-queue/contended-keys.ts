import { ACQUIRE_QUEUED_SCRIPT, type AcquireQueuedInput, type QueuedReply } from '../scripts/acquire-queued.script.js';
import { withParse, type RedisScript } from '../scripts/redis-script.js';

/** Bounds the memory of {@link ContendedKeys}. */
const MAX_CONTENDED_KEYS = 1_000;

/**
 * Lock keys this store instance last found queued for, most recent last: a waiter for one of them joins with
 * a plain `RPUSHX` (one command instead of a script call that runs it), and only when no queue turns out to
 * be there makes the full attempt (its reply, read by {@link joinScript}, tells). A key last seen free is
 * taken off. Shared by every waiter of the store.
 */
export class ContendedKeys {
  private readonly keys = new Map<string, true>();

  /** The queued join, whose replies keep this memory current where they arrive. */
  readonly joinScript: RedisScript<AcquireQueuedInput, QueuedReply> = withParse(ACQUIRE_QUEUED_SCRIPT, (reply, call) => {
    const parsed = ACQUIRE_QUEUED_SCRIPT.parse(reply, call);
    this.note(call.input.lockKey, !parsed.granted);
    return parsed;
  });

  has(lockKey: string): boolean {
    return this.keys.has(lockKey);
  }

  note(lockKey: string, contended: boolean): void {
    if (!contended) {
      if (this.keys.size > 0) this.keys.delete(lockKey);
      return;
    }
    this.keys.delete(lockKey);
    this.keys.set(lockKey, true);
    if (this.keys.size > MAX_CONTENDED_KEYS) this.keys.delete(this.keys.keys().next().value!);
  }
}
