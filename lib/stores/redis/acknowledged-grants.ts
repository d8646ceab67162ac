import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type { AcquireResult } from '../lock-store.interface.js';
import type { Acknowledgement } from './commands/script-send.js';
import type { RedisCommands, SentCommand } from './commands/redis-commands.js';
import type { RedisConnection } from './connection/redis-connection.js';
import type { RedisKeyLayout } from './redis-key-layout.js';
import type { RedisScript, SentScript } from './scripts/redis-script.js';
import { RENEW_MANY_SCRIPT } from './scripts/renew-many.script.js';

/**
 * With `replicas`: a grant counts only once that many replicas acknowledged it (`WAIT`, Redisson's synced
 * writes), so a failover to an acknowledging replica cannot lose it. A grant only the primary has (or whose
 * WAIT was refused, which says nothing of the replicas) is released, token-checked, never left held, and the
 * acquisition fails with `LockStoreUnavailableError` naming the server and the count; a waiter retries it
 * within its wait, as it retries any store failure.
 */
export class AcknowledgedGrants {
  private readonly acknowledgement: Acknowledgement;

  constructor(
    private readonly connection: RedisConnection,
    private readonly commands: RedisCommands,
    private readonly layout: RedisKeyLayout,
    /** The store's token-checked release (a fair one hands the key on). */
    private readonly release: (key: string, token: string) => Promise<unknown>,
  ) {
    this.acknowledgement = commands.acknowledgement!;
  }

  /** A single attempt: its grant script with WAIT after it, on the same connection (see `runAcknowledged`). */
  async attempt<Input extends { readonly lockKey: string; readonly token: string }>(
    key: string,
    script: RedisScript<Input, AcquireResult>,
    input: Input,
    onUnknownOutcome: (call: SentScript<Input>) => void,
  ): Promise<AcquireResult> {
    const { result, acknowledged, waitRefused } = await this.commands.runAcknowledged('acquire', key, script, input, onUnknownOutcome);
    if (!result.acquired || acknowledged >= this.acknowledgement.replicas) return result;
    return this.refuse(key, input.token, '', acknowledged, waitRefused);
  }

  /**
   * A fair waiter's grant, however it learnt of it: its own join or look made it, or another client's
   * release handed the key over. Its calls in line send no WAIT (most only queue, and a wait without a write
   * of its own proves nothing), and WAIT covers only what its connection wrote: a hand-off is the
   * releaser's write. Replication is one ordered stream, so a write of the waiter's own after the grant,
   * acknowledged, covers the grant with everything before it: the renewal's script (token-checked, so it
   * finds the hold still ours or says it is not), which brings the hold to the whole lease, WAIT after it.
   * Resolves once acknowledged; the lease then counts from the renewal's send time. Otherwise (not ours any
   * more, not acknowledged, WAIT refused, no answer) the hold is released, token-checked, before it rejects;
   * `onUnknownOutcome` follows up a renewal whose outcome is unknown, as the wait's other calls.
   */
  async confirm(key: string, token: string, leaseMs: number, onUnknownOutcome: (call: SentCommand) => void): Promise<void> {
    const lockKey = this.layout.lockKey(key);
    let renewed: boolean;
    let acknowledged: number;
    let waitRefused: string | undefined;
    try {
      let replies;
      ({ result: replies, acknowledged, waitRefused } = await this.commands.runAcknowledged('acquire', key, RENEW_MANY_SCRIPT, [{ lockKey, token, leaseMs }], onUnknownOutcome));
      renewed = replies[0] === 'renewed';
    } catch (error) {
      await this.release(key, token).catch(ignore);
      throw error;
    }
    if (!renewed) {
      await this.release(key, token).catch(ignore);
      const cause = new Error(
        `${this.connection.server(lockKey)} granted the lock${TO_WAITER_IN_LINE}, but it was no longer the waiter's when the replicas' acknowledgement was asked ` +
          '(lost with a failover, or its hand-off ran out first)',
      );
      throw new LockStoreUnavailableError('acquire', key, { cause });
    }
    if (acknowledged < this.acknowledgement.replicas) await this.refuse(key, token, TO_WAITER_IN_LINE, acknowledged, waitRefused);
  }

  /** `to`: '' for a single attempt's grant, or {@link TO_WAITER_IN_LINE} for a queued one. */
  private async refuse(key: string, token: string, to: string, acknowledged: number, waitRefused: string | undefined): Promise<never> {
    await this.release(key, token).catch(ignore);
    const { replicas, timeoutMs } = this.acknowledgement;
    const cause = new Error(
      waitRefused
        ? `the lock was granted${to}, but WAIT was refused (${waitRefused}): allow WAIT for this user (+wait) or set replicas: 0; the grant was released`
        : `${this.connection.server(this.layout.lockKey(key))} granted the lock${to}, but only ${acknowledged} of ${replicas} replica(s) acknowledged it within ${timeoutMs} ms; it was released`,
    );
    throw new LockStoreUnavailableError('acquire', key, { cause });
  }
}

/** How a queued grant's refusal says whom the lock was granted to (a single attempt's says nothing more). */
const TO_WAITER_IN_LINE = ' to a waiter in line';

function ignore(): void {}
