import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { NotSentError, type RedisConnection } from './redis-connection.js';
import type { RedisClient } from './scripts/define-script.js';

/** ioredis' messages for "the command could not reach the server", whatever the underlying cause. */
const UNREACHABLE = [
  'Reached the max retries per request limit',
  'Connection is closed',
  "Stream isn't writeable",
  'None of the sentinels are available',
  'Failed to refresh slots cache',
  'Cluster is ended',
];

/**
 * Sends the store's commands: waits for a client that does not queue while connecting, bounds every call by
 * `commandTimeoutMs`, runs a clean-up when the outcome is unknown (no answer, connection lost), and turns
 * every failure into a `LockStoreUnavailableError` whose cause names the server and the reason.
 */
export class RedisCommands {
  constructor(
    private readonly connection: RedisConnection,
    private readonly timeoutMs: number,
  ) {}

  /**
   * `routingKey` is the Redis key the command is sent for (it picks the Cluster node named in errors);
   * `onUnknownOutcome` runs when the command may have run without us learning its result.
   */
  run<T>(
    operation: string,
    key: string,
    routingKey: string | undefined,
    send: (client: RedisClient) => Promise<T>,
    onUnknownOutcome?: () => void,
  ): Promise<T> {
    const { connection } = this;
    const ready = connection.whenReady(this.timeoutMs);
    const pending = ready ? ready.then(() => send(connection.client)) : send(connection.client);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        onUnknownOutcome?.();
        const cause = new Error(`${connection.server(routingKey)} did not answer within ${this.timeoutMs} ms`);
        reject(new LockStoreUnavailableError(operation, key, { cause }));
      }, this.timeoutMs);
      timer.unref();
      pending.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          // A reply error means Redis answered (the script did not run); anything else may have run.
          if (!isReplyError(error) && !(error instanceof NotSentError)) onUnknownOutcome?.();
          reject(new LockStoreUnavailableError(operation, key, { cause: this.describe(error, routingKey) }));
        },
      );
    });
  }

  /** A failure as the operator needs it: which server, and why. */
  describe(error: unknown, routingKey?: string): Error {
    const server = this.connection.server(routingKey);
    const original = error instanceof Error ? error : new Error(String(error));
    let message: string;
    if (UNREACHABLE.some((text) => original.message.includes(text)) || original instanceof NotSentError) {
      const why = this.connection.lastConnectionError?.message ?? original.message;
      message = `${server} is unreachable (${why})`;
    } else if (isReplyError(original)) {
      message = `${server} replied ${original.message}`;
      if (/^MOVED /.test(original.message) && !this.connection.client.isCluster) {
        message += ' (it is a Redis Cluster node: configure redis: { cluster: [seed nodes] } instead of a single server)';
      }
    } else {
      message = `${server}: ${original.message}`;
    }
    // ioredis attaches the failed command, arguments included, to its errors; for our scripts those
    // arguments are ownership tokens. The cause keeps only what went wrong, and where.
    const clean = new Error(message);
    clean.name = original.name;
    return clean;
  }
}

export function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}
