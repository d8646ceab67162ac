import type { AcquireResult, LockShape } from '../lock-store.interface.js';
import { ownershipTokenProblem } from '../ownership-token.js';
import type { AcknowledgedGrants } from './acknowledged-grants.js';
import { clockMicros } from './client-clock.js';
import type { RedisCommands } from './commands/redis-commands.js';
import type { RedisKeyLayout } from './redis-key-layout.js';
import { ACQUIRE_IF_NO_QUEUE_SCRIPT } from './scripts/acquire-queued.script.js';
import { ACQUIRE_SCRIPT, parseAcquireReply, type AcquireInput } from './scripts/acquire.script.js';
import { LOCK_VALUE_SEPARATOR } from './scripts/lock-value.js';
import type { SentScript } from './scripts/redis-script.js';
import { SHARED_ACQUIRE_IF_NO_QUEUE_SCRIPT } from './scripts/shared-acquire-queued.script.js';
import { SHARED_ACQUIRE_SCRIPT, type SharedAcquireInput } from './scripts/shared-acquire.script.js';

/**
 * The Redis store's single attempts (`LockStore.acquire`, `acquireShared`): one script call each, the fair
 * queue's variant with `fair` (turned away while anybody stands in line), acknowledged by replicas with
 * `replicas`, and cleaned up when its outcome is unknown.
 */
export class RedisSingleAttempts {
  constructor(
    private readonly commands: RedisCommands,
    private readonly layout: RedisKeyLayout,
    private readonly fair: boolean,
    /** With `replicas`: grants count once acknowledged (WAIT after the script), fair or not. */
    private readonly acknowledged: AcknowledgedGrants | undefined,
    /** The store's token-checked release. */
    private readonly release: (key: string, token: string, keepMs: number) => Promise<boolean>,
  ) {}

  acquire(key: string, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    if (token === '' || token.includes(LOCK_VALUE_SEPARATOR)) return Promise.reject(tokenError(token));
    const lockKey = this.layout.lockKey(key);
    if (this.fair) {
      // A single attempt that respects the queue: while waiters stand in line, it is turned away.
      const { fenceKey, queueKey } = this.layout.queueNames(lockKey);
      const input = { lockKey, fenceKey, queueKey, token, leaseMs, holder, clockMicros: clockMicros() };
      if (this.acknowledged) return this.acknowledged.attempt(key, ACQUIRE_IF_NO_QUEUE_SCRIPT, input, this.cleanUpAcquire);
      return this.commands.runScript('acquire', key, ACQUIRE_IF_NO_QUEUE_SCRIPT, input, this.cleanUpAcquire);
    }
    const input: AcquireInput = { lockKey, fenceKey: this.layout.fenceKey(lockKey), token, leaseMs, holder, clockMicros: clockMicros() };
    if (this.acknowledged) return this.acknowledged.attempt(key, ACQUIRE_SCRIPT, input, this.cleanUpAcquire);
    return this.commands.runScript('acquire', key, ACQUIRE_SCRIPT, input, this.cleanUpAcquire);
  }

  /**
   * Read/write locks and semaphores: one hash at the lock key (see scripts/shared-hold.lua.ts). With `fair`,
   * a single attempt serves the shaped waiters' queue first and never overtakes it (see
   * scripts/shared-acquire-queued.script.ts).
   */
  acquireShared(key: string, shape: LockShape, token: string, leaseMs: number, holder: string): Promise<AcquireResult> {
    if (token === '' || token.includes(LOCK_VALUE_SEPARATOR)) return Promise.reject(tokenError(token));
    const lockKey = this.layout.lockKey(key);
    if (this.fair) {
      const { tag, fenceKey, queueKey } = this.layout.queueNames(lockKey, 'shaped');
      const grantChannelBase = this.layout.grantChannel(tag, '');
      const input = { lockKey, fenceKey, queueKey, token, leaseMs, holder, clockMicros: clockMicros(), shape, grantChannelBase };
      if (this.acknowledged) return this.acknowledged.attempt(key, SHARED_ACQUIRE_IF_NO_QUEUE_SCRIPT, input, this.cleanUpAcquire);
      return this.commands.runScript('acquire', key, SHARED_ACQUIRE_IF_NO_QUEUE_SCRIPT, input, this.cleanUpAcquire);
    }
    const input: SharedAcquireInput = { lockKey, fenceKey: this.layout.fenceKey(lockKey), token, leaseMs, holder, clockMicros: clockMicros(), shape };
    if (this.acknowledged) return this.acknowledged.attempt(key, SHARED_ACQUIRE_SCRIPT, input, this.cleanUpAcquire);
    return this.commands.runScript('acquire', key, SHARED_ACQUIRE_SCRIPT, input, this.cleanUpAcquire);
  }

  /**
   * Without an answer (timeout, connection lost), the script may still have run or still run: take the
   * key back if it did. Both calls go down the same connection in order, so the clean-up runs after it; and
   * should the reply still come, a grant in it is released too. One function for every acquisition (their
   * replies all read as the plain acquire's); the token is the one the call's input was granted under.
   */
  private readonly cleanUpAcquire = (call: SentScript<unknown>): void => {
    const token = call.ownershipToken!;
    this.release(call.key, token, 0).catch(ignore);
    call.reply.then((reply) => parseAcquireReply(reply).acquired && this.release(call.key, token, 0)).catch(ignore);
  };
}

/** Tokens are written into the lock value between separators (see scripts/lock-value.ts). */
export function tokenError(token: string): Error {
  const problem = ownershipTokenProblem(token);
  if (problem) return problem;
  return new TypeError(`An ownership token must not contain "${LOCK_VALUE_SEPARATOR}" (got one of ${token.length} characters).`);
}

function ignore(): void {}
