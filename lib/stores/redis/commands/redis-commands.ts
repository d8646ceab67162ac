import { CommandCall, isReplyError, type CallTracker, type ReplyParser, type SentCommand } from './redis-command-call.js';
import { NotSentError, type RedisConnection } from '../connection/redis-connection.js';
import type { RedisClient } from '../connection/redis-client.js';
import type { RedisScript } from '../scripts/define-script.js';

export type { ReplyParser, SentCommand } from './redis-command-call.js';

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
 *
 * The bound costs the hot path neither a timer nor a clock reading per command: commands in flight are kept
 * oldest first, and one shared timer sweeps them every quarter of the timeout while any is in flight,
 * failing those that have been out for {@link SWEEPS_TO_EXPIRE} sweeps. A command therefore fails between
 * one and one and a quarter timeouts after it was sent (never earlier), and under steady traffic the whole
 * store sets four timers per timeout period, however many commands go by.
 */
export class RedisCommands implements CallTracker {
  private oldest?: CommandCall;
  private newest?: CommandCall;
  private sweeper?: NodeJS.Timeout;
  /** Sweeps so far; a command remembers the count it was sent under. */
  private sweeps = 0;
  private readonly sweepEveryMs: number;

  constructor(
    private readonly connection: RedisConnection,
    private readonly timeoutMs: number,
  ) {
    this.sweepEveryMs = Math.max(1, Math.ceil(timeoutMs / (SWEEPS_TO_EXPIRE - 1)));
  }

  get client(): RedisClient {
    return this.connection.client;
  }

  /**
   * `routingKey` is the Redis key the command is sent for (it picks the Cluster node named in errors);
   * `onUnknownOutcome` runs when the command may have run without us learning its result.
   */
  run<T>(
    operation: string,
    key: string,
    routingKey: string | undefined,
    send: (client: RedisClient) => Promise<T>,
    onUnknownOutcome?: (call: SentCommand) => void,
  ): Promise<T> {
    return this.start(operation, key, routingKey, onUnknownOutcome, send);
  }

  /**
   * A script call, the hot path's way: EVALSHA with the NOSCRIPT fallback and `parse` handled where the
   * reply arrives, so the caller's promise is the only one on top of the command's (and the one bound by
   * the timeout).
   */
  runScript<T>(
    operation: string,
    key: string,
    routingKey: string,
    script: RedisScript,
    numKeys: number,
    args: (string | number)[],
    parse: ReplyParser<T>,
    onUnknownOutcome?: (call: SentCommand) => void,
  ): Promise<T> {
    return this.start(operation, key, routingKey, onUnknownOutcome, undefined, script, numKeys, args, parse);
  }

  /**
   * Tracks one call under the timeout and sends it once the connection takes commands: `send`, or `script`
   * with its keys and arguments (set on the call at once, so a clean-up of a call that never got out still
   * sees them; positional rather than a closure, as this is every acquisition's path).
   */
  private start<T>(
    operation: string,
    key: string,
    routingKey: string | undefined,
    onUnknownOutcome: ((call: SentCommand) => void) | undefined,
    send: ((client: RedisClient) => Promise<unknown>) | undefined,
    script?: RedisScript,
    numKeys = 0,
    args?: (string | number)[],
    parse?: ReplyParser<unknown>,
  ): Promise<T> {
    const { connection } = this;
    const ready = connection.whenReady(this.timeoutMs);
    return new Promise<T>((resolve, reject) => {
      const call = this.track(operation, key, routingKey, onUnknownOutcome, resolve as (value: unknown) => void, reject);
      if (script) call.useScript(script, numKeys, args!, parse!);
      else call.sender = send;
      call.listen(ready ? ready.then(() => call.send(connection.client)) : call.send(connection.client));
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

  /** Stops the shared timer (commands still in flight then end with their connection). */
  close(): void {
    clearTimeout(this.sweeper);
    this.sweeper = undefined;
  }

  /** @internal */
  untrack(call: CommandCall): void {
    const { prev, next } = call;
    if (prev) prev.next = next;
    else this.oldest = next;
    if (next) next.prev = prev;
    else this.newest = prev;
    call.prev = call.next = undefined;
  }

  private track(
    operation: string,
    key: string,
    routingKey: string | undefined,
    onUnknownOutcome: ((call: SentCommand) => void) | undefined,
    resolve: (value: unknown) => void,
    reject: (error: unknown) => void,
  ): CommandCall {
    const call = new CommandCall(this, this.sweeps, this.connection.epoch, operation, key, routingKey, onUnknownOutcome, resolve, reject);
    const newest = this.newest;
    if (newest) {
      newest.next = call;
      call.prev = newest;
    } else {
      this.oldest = call;
    }
    this.newest = call;
    if (!this.sweeper) this.armSweeper();
    return call;
  }

  private armSweeper(): void {
    this.sweeper = setTimeout(() => this.sweep(), this.sweepEveryMs);
    this.sweeper.unref();
  }

  private sweep(): void {
    this.sweeper = undefined;
    const sweeps = ++this.sweeps;
    let call = this.oldest;
    while (call && sweeps - call.sentInSweep >= SWEEPS_TO_EXPIRE) {
      this.untrack(call);
      call.expire(this.timeoutMs, this.connection.server(call.routingKey));
      call = this.oldest;
    }
    // A clean-up sent from inside the loop (an unanswered acquire's release) armed the timer already: a
    // second one would double the sweep rate and fail commands after half their timeout.
    if (call && !this.sweeper) this.armSweeper();
  }
}

/**
 * A command sent between two sweeps has been out for at least `SWEEPS_TO_EXPIRE - 1` sweep intervals
 * (each a quarter of the timeout) at this many sweeps after it: the timeout, at the least.
 */
const SWEEPS_TO_EXPIRE = 5;

