import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import { NotSentError, type RedisConnection } from './redis-connection.js';
import { isNoScript, type RedisClient, type RedisScript } from './scripts/define-script.js';

/** ioredis' messages for "the command could not reach the server", whatever the underlying cause. */
const UNREACHABLE = [
  'Reached the max retries per request limit',
  'Connection is closed',
  "Stream isn't writeable",
  'None of the sentinels are available',
  'Failed to refresh slots cache',
  'Cluster is ended',
];

/** What a script call needs to turn its reply into a result (`call` tells, e.g., the connection epoch it went out in). */
export type ReplyParser<T> = (reply: unknown, call: SentCommand) => T;

/** A command as its parser and clean-up see it. */
export interface SentCommand {
  readonly key: string;
  /** The script's keys and arguments, for a clean-up that needs them (the ownership token). */
  readonly args: readonly (string | number)[] | undefined;
  /** `RedisConnection.epoch` when it was sent. */
  readonly epoch: number;
  /** The reply as it comes (also after the command timed out), for a clean-up that wants to see it. */
  readonly reply: Promise<unknown>;
}

/**
 * One command in flight, in the list of those not answered yet (oldest first). Unlinked the moment it is
 * answered, so an answered command is garbage at once instead of waiting for a sweep.
 */
class CommandCall implements SentCommand {
  prev?: CommandCall;
  next?: CommandCall;
  done = false;
  reply!: Promise<unknown>;
  /** Set for script calls: the script, sent by SHA first. */
  script?: RedisScript;
  numKeys = 0;
  args: (string | number)[] | undefined;
  parse?: ReplyParser<unknown>;
  fellBackToEval = false;

  constructor(
    readonly commands: RedisCommands,
    readonly deadline: number,
    readonly epoch: number,
    readonly operation: string,
    readonly key: string,
    readonly routingKey: string | undefined,
    readonly onUnknownOutcome: ((call: SentCommand) => void) | undefined,
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: unknown) => void,
  ) {}

  listen(reply: Promise<unknown>): void {
    this.reply = reply;
    reply.then(
      (value) => this.answered(value),
      (error: unknown) => this.failed(error),
    );
  }

  answered(value: unknown): void {
    if (this.done) return;
    this.done = true;
    this.commands.untrack(this);
    if (!this.parse) {
      this.resolve(value);
      return;
    }
    try {
      this.resolve(this.parse(value, this));
    } catch (error) {
      this.reject(error);
    }
  }

  failed(error: unknown): void {
    if (this.done) return;
    // A server that has not seen the script yet (restarted, failed over, never asked): EVAL sends it
    // along, which both answers and caches it. Still the same call, under the same deadline.
    if (this.script && !this.fellBackToEval && isNoScript(error)) {
      this.fellBackToEval = true;
      this.listen(this.script.eval(this.commands.client, this.numKeys, this.args!));
      return;
    }
    this.done = true;
    this.commands.untrack(this);
    // A reply error means Redis answered (the script did not run); anything else may have run.
    if (!isReplyError(error) && !(error instanceof NotSentError)) this.onUnknownOutcome?.(this);
    this.reject(new LockStoreUnavailableError(this.operation, this.key, { cause: this.commands.describe(error, this.routingKey) }));
  }

  /** No answer by the deadline: the outcome is unknown. */
  expire(timeoutMs: number, server: string): void {
    this.done = true;
    this.onUnknownOutcome?.(this);
    const cause = new Error(`${server} did not answer within ${timeoutMs} ms`);
    this.reject(new LockStoreUnavailableError(this.operation, this.key, { cause }));
  }
}

/**
 * Sends the store's commands: waits for a client that does not queue while connecting, bounds every call by
 * `commandTimeoutMs`, runs a clean-up when the outcome is unknown (no answer, connection lost), and turns
 * every failure into a `LockStoreUnavailableError` whose cause names the server and the reason.
 *
 * The bound costs no timer per command: commands in flight are kept oldest first (every one has the same
 * timeout, so that is also deadline order), and one shared timer, set for the oldest one's deadline, fails
 * what has run out and sets itself for the next. Under steady traffic that is one timer per timeout
 * period, however many commands go by.
 */
export class RedisCommands {
  private oldest?: CommandCall;
  private newest?: CommandCall;
  private sweeper?: NodeJS.Timeout;
  private sweeperAt = Infinity;

  constructor(
    private readonly connection: RedisConnection,
    private readonly timeoutMs: number,
  ) {}

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
    const { connection } = this;
    const ready = connection.whenReady(this.timeoutMs);
    return new Promise<T>((resolve, reject) => {
      const call = this.track(operation, key, routingKey, onUnknownOutcome, resolve as (value: unknown) => void, reject);
      call.listen(ready ? ready.then(() => send(connection.client)) : send(connection.client));
    });
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
    const { connection } = this;
    const ready = connection.whenReady(this.timeoutMs);
    return new Promise<T>((resolve, reject) => {
      const call = this.track(operation, key, routingKey, onUnknownOutcome, resolve as (value: unknown) => void, reject);
      call.script = script;
      call.numKeys = numKeys;
      call.args = args;
      call.parse = parse;
      call.listen(ready ? ready.then(() => script.evalsha(connection.client, numKeys, args)) : script.evalsha(connection.client, numKeys, args));
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
    this.sweeperAt = Infinity;
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
    const call = new CommandCall(this, Date.now() + this.timeoutMs, this.connection.epoch, operation, key, routingKey, onUnknownOutcome, resolve, reject);
    const newest = this.newest;
    if (newest) {
      newest.next = call;
      call.prev = newest;
    } else {
      this.oldest = call;
    }
    this.newest = call;
    // A later command never needs an earlier timer: the one set for an older command comes first.
    if (this.sweeperAt === Infinity) this.sweepAt(call.deadline);
    return call;
  }

  private sweepAt(at: number): void {
    this.sweeperAt = at;
    this.sweeper = setTimeout(() => this.sweep(), Math.max(0, at - Date.now()));
    this.sweeper.unref();
  }

  private sweep(): void {
    this.sweeper = undefined;
    this.sweeperAt = Infinity;
    const now = Date.now();
    let call = this.oldest;
    while (call && call.deadline <= now) {
      this.untrack(call);
      call.expire(this.timeoutMs, this.connection.server(call.routingKey));
      call = this.oldest;
    }
    if (call) this.sweepAt(call.deadline);
  }
}

export function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}
