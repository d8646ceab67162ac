import type { AcquireQueuedInput, QueuedReply } from '../scripts/acquire-queued.script.js';
import { withParse, type RedisScript } from '../scripts/redis-script.js';

/** Bounds the memory of {@link ContendedKeys}. */
const MAX_CONTENDED_KEYS = 1_000;

/**
 * Lock keys this store instance last found queued for, most recent last: a waiter for one of them joins with
 * a plain `RPUSHX` (one command instead of a script call that runs it), and only when no queue turns out to
 * be there makes the full attempt (its reply, read through {@link joinScript}, tells). A key last seen free is
 * taken off. Shared by every waiter of the store.
 */
export class ContendedKeys {
  private readonly keys = new Map<string, true>();

  /** Noted joins, by the join script they read the replies of. */
  private readonly noted = new Map<RedisScript<never, QueuedReply>, RedisScript<never, QueuedReply>>();

  /**
   * `join` (a queue's join script: the plain or the shared queue's), its replies read where they arrive to
   * keep this memory current. Made once per script. A key counts as queued whichever of its queues was
   * found standing: a waiter that then joins the other with a plain RPUSHX finds no list and makes the full
   * attempt, which is all the hint costs when it is wrong.
   */
  joinScript<Input extends AcquireQueuedInput>(join: RedisScript<Input, QueuedReply>): RedisScript<Input, QueuedReply> {
    let noted = this.noted.get(join) as RedisScript<Input, QueuedReply> | undefined;
    if (!noted) {
      noted = withParse(join, (reply, call) => {
        const parsed = join.parse(reply, call);
        this.note(call.input.lockKey, !parsed.granted);
        return parsed;
      });
      this.noted.set(join, noted);
    }
    return noted;
  }

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
