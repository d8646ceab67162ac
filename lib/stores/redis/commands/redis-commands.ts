import type { RedisClient } from '../connection/redis-client.js';
import { NotSentError, type RedisConnection } from '../connection/redis-connection.js';
import type { RedisScript, SentScript } from '../scripts/redis-script.js';
import { CommandCall, isReplyError, type Acknowledged, type CallTracker, type SentCommand } from './redis-command-call.js';
import type { Acknowledgement } from './script-send.js';

export type { Acknowledged, SentCommand } from './redis-command-call.js';

/** Between the server and the reply error in a described failure (see `describe`, `replyCode`). */
const REPLIED = ' replied ';

/**
 * The code a reply error began with (`ERR`, `NOPERM`, `BUSY`, `MOVED`...), from the original or from the
 * error `describe` made of it; undefined for any other failure.
 */
export function replyCode(error: Error): string | undefined {
  if (!isReplyError(error)) return undefined;
  const at = error.message.indexOf(REPLIED);
  const reply = at < 0 ? error.message : error.message.slice(at + REPLIED.length);
  return /^[A-Z]+/.exec(reply)?.[0];
}

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
  private sweepCount = 0;
  private readonly sweepEveryMs: number;
  /**
   * What acknowledged writes ask of the replicas (`WAIT`), when `replicas > 0`: WAIT's own bound is half
   * the command timeout, so its answer (and the clean-up) comes before ours.
   */
  readonly acknowledgement: Acknowledgement | undefined;

  constructor(
    private readonly connection: RedisConnection,
    private readonly timeoutMs: number,
    replicas = 0,
  ) {
    this.sweepEveryMs = Math.max(1, Math.ceil(timeoutMs / (SWEEPS_TO_EXPIRE - 1)));
    this.acknowledgement = replicas > 0 ? { replicas, timeoutMs: Math.max(1, Math.floor(timeoutMs / 2)) } : undefined;
  }

  get client(): RedisClient {
    return this.connection.client;
  }

  get epoch(): number {
    return this.connection.epoch;
  }

  /** Sweeps so far; a command remembers the count it was sent under. */
  get sweeps(): number {
    return this.sweepCount;
  }

  /**
   * Any command but a script. `routingKey` is the Redis key the command is sent for (it picks the Cluster
   * node named in errors); `onUnknownOutcome` runs when the command may have run without us learning its
   * result.
   */
  run<T>(
    operation: string,
    key: string,
    routingKey: string | undefined,
    send: (client: RedisClient) => Promise<T>,
    onUnknownOutcome?: (call: SentCommand) => void,
  ): Promise<T> {
    return this.start(new CommandCall(this, operation, key, onUnknownOutcome).useSender(send, routingKey));
  }

  /**
   * Every script call's way: EVALSHA of the build for this connection (SPUBLISH where pub/sub is sharded),
   * the one NOSCRIPT fallback and `script.parse` handled where the reply arrives, so the caller's promise
   * is the only one on top of the command's (and the one bound by the timeout). `key` is the user's key
   * errors name; the call goes to the node of the script's first key.
   */
  runScript<Input, Reply>(
    operation: string,
    key: string,
    script: RedisScript<Input, Reply>,
    input: Input,
    onUnknownOutcome?: (call: SentScript<Input>) => void,
  ): Promise<Reply> {
    return this.startScript(operation, key, script, input, onUnknownOutcome, undefined);
  }

  /**
   * The same for a write the replicas must acknowledge: `WAIT` follows the script on the same connection
   * (see commands/script-send.ts), and the result comes with the count of replicas that acknowledged it.
   * Only with `replicas > 0`.
   */
  runAcknowledged<Input, Reply>(
    operation: string,
    key: string,
    script: RedisScript<Input, Reply>,
    input: Input,
    onUnknownOutcome?: (call: SentScript<Input>) => void,
  ): Promise<Acknowledged<Reply>> {
    if (!this.acknowledgement) return Promise.reject(new TypeError('runAcknowledged needs replicas > 0'));
    return this.startScript(operation, key, script, input, onUnknownOutcome, this.acknowledgement);
  }

  private startScript<T>(
    operation: string,
    key: string,
    script: RedisScript<never, unknown>,
    input: unknown,
    onUnknownOutcome: ((call: SentScript<never>) => void) | undefined,
    acknowledgement: Acknowledgement | undefined,
  ): Promise<T> {
    // The definition's types end here: the call holds any script with its input.
    const call = new CommandCall(this, operation, key, onUnknownOutcome as ((call: CommandCall) => void) | undefined);
    return this.start(call.useScript(script as RedisScript<unknown, unknown>, input, this.connection.sharded, acknowledgement));
  }

  /** Tracks one call under the timeout and sends it once the connection takes commands. */
  private start<T>(call: CommandCall): Promise<T> {
    const { connection } = this;
    const ready = connection.whenReady(this.timeoutMs);
    return new Promise<T>((resolve, reject) => {
      call.resolve = resolve as (value: unknown) => void;
      call.reject = reject;
      this.track(call);
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
      message = `${server}${REPLIED}${original.message}`;
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

  private track(call: CommandCall): void {
    const newest = this.newest;
    if (newest) {
      newest.next = call;
      call.prev = newest;
    } else {
      this.oldest = call;
    }
    this.newest = call;
    if (!this.sweeper) this.armSweeper();
  }

  private armSweeper(): void {
    this.sweeper = setTimeout(() => this.sweep(), this.sweepEveryMs);
    this.sweeper.unref();
  }

  private sweep(): void {
    this.sweeper = undefined;
    const sweeps = ++this.sweepCount;
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

