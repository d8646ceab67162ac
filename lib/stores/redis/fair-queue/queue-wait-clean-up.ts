import type { SentCommand } from '../commands/redis-commands.js';
import type { QueueCalls } from './redis-queue-calls.js';

/**
 * What one queue wait does about its calls whose outcome is unknown (no answer in time, the connection
 * lost): such a call may still run, and grant the key to the wait's token or queue it, when Redis answers
 * again (guarantee 9). `QueueWait` sends its calls with these handlers and asks before it relies on what
 * it knows.
 */
export class QueueWaitCleanUp {
  /**
   * Set once a call's outcome was unknown: the token may hold the key or a place in line that the wait
   * does not know of (a join re-sent, or retried after a clean-up that never answered, stands in line
   * behind an entry of its own).
   */
  uncertain = false;
  /** Set once the wait ended without a grant: from then on every late reply is followed by a release. */
  private gaveUp = false;
  /** The clean-up of a join whose outcome was unknown, until it settled (see `joinUnknown`). */
  private joinCleanUp?: Promise<unknown>;

  constructor(
    private readonly calls: QueueCalls,
    /** The store's token-checked release of the wait's token (it hands the key on). */
    private readonly release: () => Promise<unknown>,
  ) {}

  /** Leaves the line; its own outcome, if unknown, is followed up like any call's. */
  leave(): Promise<number | undefined> {
    return this.calls.leave(this.lateReply);
  }

  /**
   * A call whose outcome is unknown: once Redis answers it after all (a stall, a slow failover), a wait
   * that ended without a grant gives back what it left its token, token-checked, after it ran.
   */
  readonly lateReply = (call: SentCommand): void => {
    this.uncertain = true;
    call.reply.then(
      () => this.gaveUp && this.releaseOurs(),
      () => undefined,
    );
  };

  /**
   * A join whose outcome is unknown may have queued us, or granted us the key: both are undone (in order,
   * on the same connection, before any retry), so the retry starts clean.
   */
  readonly joinUnknown = (call: SentCommand): void => {
    this.lateReply(call);
    const cleanUp: Promise<unknown> = this.leave()
      .then((fence) => (fence === undefined ? undefined : this.release()))
      .catch(() => undefined)
      .finally(() => {
        if (this.joinCleanUp === cleanUp) this.joinCleanUp = undefined;
      });
    this.joinCleanUp = cleanUp;
  };

  /**
   * Resolves once the clean-up of an unknown join settled. The retry carries the same token: sent before
   * that clean-up settled, it could be granted the very grant the clean-up then releases.
   */
  async settled(): Promise<void> {
    if (this.joinCleanUp) await this.joinCleanUp;
  }

  /**
   * The wait ended without a grant. When some call's outcome was unknown, the token may hold the key or a
   * place in line already: out of the queue, and the key given back if it is the token's (token-checked:
   * nothing of anybody else's is touched, and no later grant can carry this token).
   */
  giveUp(): void {
    if (this.gaveUp) return;
    this.gaveUp = true;
    if (!this.uncertain) return;
    void this.leave()
      .catch(() => undefined)
      .then(() => this.releaseOurs());
  }

  private releaseOurs(): void {
    void this.release().catch(() => undefined);
  }
}
