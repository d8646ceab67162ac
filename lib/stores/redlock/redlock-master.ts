import { RedisCommands } from '../redis/commands/redis-commands.js';
import { createRedisConnection } from '../redis/connection/redis-client.factory.js';
import type { RedisConnection } from '../redis/connection/redis-connection.js';
import { RedisLockStore } from '../redis/redis-lock.store.js';
import type { RedlockMaster } from './redlock-masters.option.js';

/**
 * One master of the quorum. Each is a plain single-server Redis store: the same lock value, the same token-
 * checked scripts (acquire, release, renew, mark-waited-for), the same unknown-outcome clean-ups and
 * release channel. Redlock is the vote over them (redlock-grant.ts, redlock-quorum.ts); the one thing a
 * single server does not do, the quorum fencing write, goes through `commands` on the same connection.
 */
export class RedlockMasterNode {
  readonly store: RedisLockStore;
  readonly commands: RedisCommands;

  private constructor(
    private readonly connection: RedisConnection,
    settings: { readonly keyPrefix: string; readonly commandTimeoutMs: number },
  ) {
    this.store = new RedisLockStore(connection, settings);
    this.commands = new RedisCommands(connection, settings.commandTimeoutMs);
  }

  static open(master: RedlockMaster, settings: { readonly keyPrefix: string; readonly commandTimeoutMs: number }): RedlockMasterNode {
    const connection = createRedisConnection(master, { closeTimeoutMs: settings.commandTimeoutMs });
    return new RedlockMasterNode(connection, settings);
  }

  /** `host:port`, never credentials (errors name it). */
  get server(): string {
    return this.connection.server();
  }

  /** Closes the connection (a client handed in stays open) and stops this node's command timer. */
  async close(): Promise<void> {
    await this.store.close();
    this.commands.close();
  }
}
