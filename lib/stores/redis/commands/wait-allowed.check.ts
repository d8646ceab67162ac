import { LockConfigError } from '../../../errors/lock-config.error.js';
import { LockStoreUnavailableError } from '../../../errors/lock-store-unavailable.error.js';
import { replyCode, type RedisCommands } from './redis-commands.js';

/**
 * With `replicas`, whether the server takes WAIT (an ACL without it, a managed service that disables it:
 * every grant would be released again). Rejects with `LockConfigError` naming `replicas` and the server's
 * reason when it refuses, with `LockStoreUnavailableError` when it does not answer or answers with a
 * state it passes through (BUSY, LOADING, MASTERDOWN...). Asked at startup.
 */
export async function checkWaitAllowed(commands: RedisCommands): Promise<void> {
  const { acknowledgement } = commands;
  if (!acknowledgement) return;
  try {
    await commands.run('ping', '*', undefined, (client) => client.wait(0, 0));
  } catch (error) {
    // The cause keeps the reply error's name (RedisCommands.describe): the server answered, and refused.
    const cause = error instanceof LockStoreUnavailableError && error.cause instanceof Error ? error.cause : undefined;
    if (!cause || !isRefusal(cause)) throw error;
    throw new LockConfigError('replicas', acknowledgement.replicas, `a server that takes WAIT (${cause.message}); allow it for this user (+wait) or set replicas: 0`);
  }
}

/**
 * Whether the server refused the command for good: Redis names passing states by their own code (BUSY,
 * LOADING, MASTERDOWN, CLUSTERDOWN, TRYAGAIN, READONLY), and a command it will not run by `ERR` (unknown or
 * renamed away, a managed service's "not available", a replica) or `NOPERM` (an ACL).
 */
function isRefusal(error: Error): boolean {
  const code = replyCode(error);
  return code === 'ERR' || code === 'NOPERM';
}
