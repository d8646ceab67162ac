import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type { AcquireResult } from '../lock-store.interface.js';
import type { Acknowledgement } from './commands/script-send.js';
import type { RedisCommands } from './commands/redis-commands.js';
import type { RedisConnection } from './connection/redis-connection.js';
import type { RedisKeyLayout } from './redis-key-layout.js';
import type { RedisScript, SentScript } from './scripts/redis-script.js';

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
    /** The store's token-checked release. */
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
    return this.refuse(key, input.token, acknowledged, waitRefused);
  }

  private async refuse(key: string, token: string, acknowledged: number, waitRefused: string | undefined): Promise<never> {
    await this.release(key, token).catch(ignore);
    const { replicas, timeoutMs } = this.acknowledgement;
    const cause = new Error(
      waitRefused
        ? `the lock was granted, but WAIT was refused (${waitRefused}): allow WAIT for this user (+wait) or set replicas: 0; the grant was released`
        : `${this.connection.server(this.layout.lockKey(key))} granted the lock, but only ${acknowledged} of ${replicas} replica(s) acknowledged it within ${timeoutMs} ms; it was released`,
    );
    throw new LockStoreUnavailableError('acquire', key, { cause });
  }
}

function ignore(): void {}
